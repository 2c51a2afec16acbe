import type { GithubHook } from '../config/senders.js';
import type { Queryable } from '../db/database.js';
import { storedKeys } from '../db/stored-keys.js';
import { apiUrl, callSenderApi, sameOriginLink, type SenderApiClient } from './sender-api.js';
import { oldestFirst } from './store-events.js';
import { MAX_ADDED_IDS, type ReconcileProgress, type ReconcileSummary } from './summary.js';

/** The route GitHub's deliveries are stored under (`/webhooks/github`). */
const GITHUB_SOURCE = 'github';
/** Deliveries per page: the list endpoint's maximum. */
const PER_PAGE = 100;

/** One attempt as `GET …/hooks/{hook_id}/deliveries` lists it (a redelivery is a new attempt with the same `guid`). */
export interface GithubDelivery {
  id: number;
  guid: string;
  delivered_at: string;
  redelivery: boolean;
  status: string;
  status_code: number;
  event: string;
  action: string | null;
}

/** The two calls gap repair makes on a webhook's deliveries. */
export interface GithubDeliveriesApi {
  /** Every attempt delivered at or after `since`, newest first, one page at a time. */
  listDeliveries(since: Date, signal?: AbortSignal): AsyncIterable<GithubDelivery[]>;
  /** Ask GitHub to send this delivery again, signed as the first time (202). */
  redeliver(deliveryId: number, signal?: AbortSignal): Promise<void>;
}

/** A hook's path under the REST API: a repository's or an organization's webhook. */
export function hookPath(hook: GithubHook): string {
  const e = encodeURIComponent;
  return hook.kind === 'org' ? `/orgs/${e(hook.org)}/hooks/${hook.id}` : `/repos/${e(hook.owner)}/${e(hook.repo)}/hooks/${hook.id}`;
}

/** The `rel="next"` URL of a Link header, as GitHub pages with `cursor`. */
export function nextLink(link: string | null): string | undefined {
  return link
    ?.split(',')
    .find((part) => /;\s*rel="next"/.test(part))
    ?.match(/<([^>]+)>/)?.[1];
}

/** GitHub's REST API for one webhook, with the token; plain fetch (no Octokit dependency for two calls). */
export function createGithubApi(settings: { token: string; hook: GithubHook; apiBase: URL }): GithubDeliveriesApi {
  const client: SenderApiClient = {
    provider: 'GitHub',
    headers: { authorization: `Bearer ${settings.token}`, accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' },
    errorMessage: (body) => {
      const message = (body as { message?: unknown } | undefined)?.message;
      return typeof message === 'string' ? message : undefined;
    },
  };
  const base = apiUrl(settings.apiBase, `${hookPath(settings.hook)}/deliveries`);
  return {
    async *listDeliveries(since, signal) {
      let url: URL | undefined = apiUrl(settings.apiBase, `${hookPath(settings.hook)}/deliveries`, { per_page: String(PER_PAGE) });
      while (url) {
        const page: { body: GithubDelivery[]; headers: Headers } = await callSenderApi<GithubDelivery[]>(client, 'GET', url, { signal });
        if (!Array.isArray(page.body)) throw new Error(`GitHub API answered ${url.pathname} with something other than a list of deliveries.`);
        const inWindow = page.body.filter((d) => !(Date.parse(d.delivered_at) < since.getTime()));
        yield inWindow;
        const next = inWindow.length < page.body.length ? undefined : nextLink(page.headers.get('link'));
        url = next ? sameOriginLink(next, settings.apiBase, client.provider) : undefined;
      }
    },
    async redeliver(deliveryId, signal) {
      await callSenderApi(client, 'POST', new URL(`${base.href}/${deliveryId}/attempts`), { signal });
    },
  };
}

/** A delivery to ask for again: its GUID, time and the id of its latest attempt. */
interface MissingDelivery {
  key: string;
  atMs: number;
  id: number;
}

/**
 * GitHub never retries a failed delivery: list the webhook's deliveries since
 * `since`, and ask GitHub to redeliver each whose GUID (X-GitHub-Delivery, the
 * inbox key) the inbox does not hold. The inbox is the truth, not GitHub's
 * status code: a 2xx whose row is gone (a restored backup) is redelivered, and
 * a timed-out attempt hookrun did store is not (its redelivery would only be a
 * duplicate). Each page is checked against the inbox as it is listed; only
 * GUIDs and attempt ids are kept across pages. GitHub then sends each one
 * signed, and the receiver stores it as usual, so `added` counts
 * redeliveries asked for, not rows written here.
 */
export async function reconcileGithub(input: {
  api: GithubDeliveriesApi;
  db: Queryable;
  since: Date;
  onProgress?: ReconcileProgress;
  signal?: AbortSignal;
}): Promise<ReconcileSummary> {
  // Newest first: the first attempt seen of a GUID is its latest, which is the one to redeliver.
  const seen = new Set<string>();
  const missing: MissingDelivery[] = [];
  let alreadyStored = 0;
  for await (const page of input.api.listDeliveries(input.since, input.signal)) {
    const latest = new Map<string, GithubDelivery>();
    for (const attempt of page) if (!seen.has(attempt.guid) && !latest.has(attempt.guid)) latest.set(attempt.guid, attempt);
    for (const guid of latest.keys()) seen.add(guid);
    const stored = await storedKeys(input.db, GITHUB_SOURCE, [...latest.keys()]);
    alreadyStored += stored.size;
    for (const d of latest.values()) if (!stored.has(d.guid)) missing.push({ key: d.guid, atMs: Date.parse(d.delivered_at), id: d.id });
    input.onProgress?.({ found: seen.size, added: 0 });
  }
  const order = oldestFirst(missing);
  const byGuid = new Map(missing.map((m) => [m.key, m.id]));
  for (const [i, guid] of order.entries()) {
    input.signal?.throwIfAborted();
    try {
      await input.api.redeliver(byGuid.get(guid)!, input.signal);
    } catch (error) {
      if (error instanceof Error && i > 0)
        error.message = `${error.message} (after ${i} of ${order.length} redeliveries were asked for; run it again for the rest)`;
      throw error;
    }
    input.onProgress?.({ found: seen.size, added: i + 1 });
  }
  return { since: input.since.toISOString(), found: seen.size, added: order.length, alreadyStored, addedIds: order.slice(0, MAX_ADDED_IDS) };
}
