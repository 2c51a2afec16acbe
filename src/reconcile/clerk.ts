import { stringifyExactJson } from '../db/stored-payload.js';
import type { EventWriter } from '../db/event-writer.js';
import { apiUrl, callSenderApi, type SenderApiClient } from './sender-api.js';
import { mapPages, storeListedPages, type ListedEvent } from './store-events.js';
import type { ReconcileProgress, ReconcileSummary } from './summary.js';

/** Objects per page (the Backend API allows up to 500; 100 keeps each answer small). */
const LIMIT = 100;

/** A user or organization as the Backend API returns it: the same object a `user.updated` / `organization.updated` webhook carries in `data`. */
export interface ClerkObject {
  id: string;
  /** Milliseconds since 1970, as Clerk writes it. */
  updated_at: number;
  [field: string]: unknown;
}

/** Clerk's Backend API lists gap repair reads, with CLERK_SECRET_KEY. */
export interface ClerkBackendApi {
  /** Users updated at or after `since`, newest update first (`order_by=-updated_at`, stopping at the first older one), one page at a time. */
  listUsers(since: Date, signal?: AbortSignal): AsyncIterable<ClerkObject[]>;
  /** Organizations updated at or after `since` (the list has no updated_at order: every page is read, each filtered), one page at a time. */
  listOrganizations(since: Date, signal?: AbortSignal): AsyncIterable<ClerkObject[]>;
}

const isObject = (value: unknown): value is ClerkObject =>
  typeof value === 'object' && value !== null && typeof (value as ClerkObject).id === 'string' && typeof (value as ClerkObject).updated_at === 'number';

/** Plain fetch (`@clerk/backend` is only an optional peer): limit/offset pages. */
export function createClerkApi(settings: { key: string; apiBase: URL }): ClerkBackendApi {
  const client: SenderApiClient = {
    provider: 'Clerk',
    headers: { authorization: `Bearer ${settings.key}` },
    errorMessage: (body) => {
      const first = (body as { errors?: Array<{ message?: unknown; long_message?: unknown; code?: unknown }> } | undefined)?.errors?.[0];
      const message = [first?.long_message, first?.message].find((m): m is string => typeof m === 'string');
      return message && typeof first?.code === 'string' ? `${message} (${first.code})` : message;
    },
  };
  const page = async (path: string, offset: number, query: Record<string, string>, signal?: AbortSignal) => {
    const url = apiUrl(settings.apiBase, path, { limit: String(LIMIT), offset: String(offset), ...query });
    const { body } = await callSenderApi<unknown>(client, 'GET', url, { signal });
    const list = Array.isArray(body) ? body : (body as { data?: unknown } | undefined)?.data;
    if (!Array.isArray(list) || !list.every(isObject)) throw new Error(`Clerk API answered ${path} without a list of objects with id and updated_at.`);
    return { list, total: (body as { total_count?: unknown }).total_count };
  };
  return {
    async *listUsers(since, signal) {
      for (let offset = 0; ; offset += LIMIT) {
        const { list } = await page('/v1/users', offset, { order_by: '-updated_at' }, signal);
        const recent = list.filter((u) => u.updated_at >= since.getTime());
        yield recent;
        if (list.length < LIMIT || recent.length < list.length) return;
      }
    },
    async *listOrganizations(since, signal) {
      for (let offset = 0; ; offset += LIMIT) {
        const { list, total } = await page('/v1/organizations', offset, {}, signal);
        yield list.filter((o) => o.updated_at >= since.getTime());
        if (list.length < LIMIT || (typeof total === 'number' && offset + LIMIT >= total)) return;
      }
    },
  };
}

/**
 * A listed object as the `<kind>.updated` event Clerk would have sent: the
 * webhook envelope (`data`, `object: 'event'`, `type`, `timestamp`) around the
 * API's object, keyed `backfill_<kind>_<id>_<updated_at>` so the same state is
 * stored once however often a reconcile runs, and a newer state is a new event.
 */
export function backfillEvent(kind: 'user' | 'organization', object: ClerkObject): ListedEvent {
  const type = `${kind}.updated`;
  return {
    key: `backfill_${kind}_${object.id}_${object.updated_at}`,
    type,
    payloadJson: stringifyExactJson({ data: object, object: 'event', type, timestamp: object.updated_at }),
    atMs: object.updated_at,
  };
}

/**
 * Bring the Clerk mirror up to date the way Clerk recommends backfilling: list
 * users and organizations changed since `since`, and store each as a synthetic
 * `user.updated` / `organization.updated` event rather than writing the
 * mirror directly. Why events: the mirror's own handler applies them with its
 * order rule (an older `updated_at` never overwrites a newer row), a project's
 * `clerk:user.updated` handlers see the backfill too, the inbox shows and can
 * replay them, and deterministic keys make a rerun store nothing new. Each
 * page is stored before the next is listed. Deleted users and organizations
 * are not listed by the API, so a missed delete is not recovered; memberships
 * are not listed either.
 */
export async function reconcileClerk(input: {
  api: ClerkBackendApi;
  writer: Pick<EventWriter, 'write'>;
  since: Date;
  onProgress?: ReconcileProgress;
  signal?: AbortSignal;
}): Promise<ReconcileSummary> {
  const { api, since, signal } = input;
  async function* pages(): AsyncIterable<ListedEvent[]> {
    yield* mapPages(api.listUsers(since, signal), (user) => backfillEvent('user', user));
    yield* mapPages(api.listOrganizations(since, signal), (organization) => backfillEvent('organization', organization));
  }
  return storeListedPages({ writer: input.writer, source: 'auth', since, pages: pages(), onProgress: input.onProgress, signal });
}
