import { stringifyExactJson } from '../db/stored-payload.js';
import type { EventWriter } from '../db/event-writer.js';
import { workosMirrorHandlers } from '../inbox/handlers/workos-mirror.js';
import { apiUrl, callSenderApi, type SenderApiClient } from './sender-api.js';
import { isoMs, mapPages, storeListedPages } from './store-events.js';
import type { ReconcileProgress, ReconcileSummary } from './summary.js';

/** The WorkOS event types the shipped WorkOS mirror acts on: what a reconcile lists (`events[]` is required by the API). */
export const RECONCILED_WORKOS_TYPES: readonly string[] = Object.keys(workosMirrorHandlers);
/** Events per page: the API's maximum. */
const LIMIT = 100;

/** An event as `GET /events` lists it: the JSON a webhook delivers. */
export interface WorkosEvent {
  id: string;
  event: string;
  data: unknown;
  created_at: string;
  [field: string]: unknown;
}

interface WorkosPage {
  data: WorkosEvent[];
  list_metadata?: { after?: string | null };
}

/** WorkOS's events list (https://workos.com/docs/reference/events/list), with WORKOS_API_KEY. */
export interface WorkosEventsApi {
  /** The events of `types` created at or after `since`, one page at a time (the next is asked for when the caller is done with this one). */
  listEvents(since: Date, types: readonly string[], signal?: AbortSignal): AsyncIterable<WorkosEvent[]>;
}

/** Plain fetch (no WorkOS SDK dependency): `events[]`, `range_start`, 100 a page, `after` from `list_metadata.after` until it is null. */
export function createWorkosApi(settings: { key: string; apiBase: URL }): WorkosEventsApi {
  const client: SenderApiClient = {
    provider: 'WorkOS',
    headers: { authorization: `Bearer ${settings.key}` },
    errorMessage: (body) => {
      const b = body as { message?: unknown; error?: unknown; error_description?: unknown; code?: unknown } | undefined;
      const message = [b?.message, b?.error_description, b?.error].find((m): m is string => typeof m === 'string');
      return message && typeof b?.code === 'string' ? `${message} (${b.code})` : message;
    },
  };
  return {
    async *listEvents(since, types, signal) {
      let after: string | undefined;
      do {
        const query = { 'events[]': types, range_start: since.toISOString(), limit: String(LIMIT), ...(after ? { after } : {}) };
        const url = apiUrl(settings.apiBase, '/events', query);
        const { body }: { body: WorkosPage } = await callSenderApi<WorkosPage>(client, 'GET', url, { signal });
        if (!Array.isArray(body?.data)) throw new Error(`WorkOS API answered ${url.pathname} without a data list.`);
        yield body.data.filter((e) => !(isoMs(e.created_at) < since.getTime()));
        after = body.list_metadata?.after ?? undefined;
      } while (after);
    },
  };
}

/**
 * Recover the WorkOS events hookrun missed: list the events of the mirror's
 * types since `since` and store each page as it arrives, as `/webhooks/auth`
 * with AUTH_PROVIDER=workos does: source `auth`, key the event `id`, type
 * `event`, the event's JSON; the WorkOS mirror processes them.
 */
export async function reconcileWorkos(input: {
  api: WorkosEventsApi;
  writer: Pick<EventWriter, 'write'>;
  since: Date;
  onProgress?: ReconcileProgress;
  signal?: AbortSignal;
}): Promise<ReconcileSummary> {
  return storeListedPages({
    writer: input.writer,
    source: 'auth',
    since: input.since,
    pages: mapPages(input.api.listEvents(input.since, RECONCILED_WORKOS_TYPES, input.signal), (e) => ({
      key: e.id,
      type: e.event,
      payloadJson: stringifyExactJson(e),
      atMs: isoMs(e.created_at),
    })),
    onProgress: input.onProgress,
    signal: input.signal,
  });
}
