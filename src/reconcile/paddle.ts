import { stringifyExactJson } from '../db/stored-payload.js';
import type { EventWriter } from '../db/event-writer.js';
import { paddleMirrorHandlers } from '../inbox/handlers/paddle-mirror.js';
import { apiUrl, callSenderApi, sameOriginLink, type SenderApiClient } from './sender-api.js';
import { isoMs, mapPages, storeListedPages } from './store-events.js';
import type { ReconcileProgress, ReconcileSummary } from './summary.js';

/** The Paddle event types the shipped Paddle mirror acts on: what a reconcile lists (a test keeps it equal to the handlers'). */
export const RECONCILED_PADDLE_TYPES: readonly string[] = Object.keys(paddleMirrorHandlers);
/** Events per page: the API's maximum. */
const PER_PAGE = 200;

/** An event as `GET /events` lists it: the same JSON a notification delivers (`notification_id` aside). */
export interface PaddleEvent {
  event_id: string;
  event_type: string;
  occurred_at: string;
  data: unknown;
  [field: string]: unknown;
}

interface PaddlePage {
  data: PaddleEvent[];
  meta?: { pagination?: { next?: string; has_more?: boolean } };
}

/** Paddle Billing's events list (https://developer.paddle.com/api-reference/events/list-events), with PADDLE_API_KEY. */
export interface PaddleEventsApi {
  /** The events of `types` that occurred at or after `since`, newest first, one page at a time (the next is asked for when the caller is done with this one). */
  listEvents(since: Date, types: readonly string[], signal?: AbortSignal): AsyncIterable<PaddleEvent[]>;
}

/** Plain fetch (the Paddle SDK is only a devDependency): newest first by id, 200 a page, following `meta.pagination.next` (its `after` cursor). */
export function createPaddleApi(settings: { key: string; apiBase: URL }): PaddleEventsApi {
  const client: SenderApiClient = {
    provider: 'Paddle',
    headers: { authorization: `Bearer ${settings.key}`, 'paddle-version': '1' },
    errorMessage: (body) => {
      const error = (body as { error?: { code?: unknown; detail?: unknown } } | undefined)?.error;
      return typeof error?.detail === 'string' ? `${error.detail}${typeof error.code === 'string' ? ` (${error.code})` : ''}` : undefined;
    },
  };
  return {
    async *listEvents(since, types, signal) {
      const query = { order_by: 'id[DESC]', per_page: String(PER_PAGE), ...(types.length > 0 ? { event_type: types.join(',') } : {}) };
      let url: URL | undefined = apiUrl(settings.apiBase, '/events', query);
      while (url) {
        const page: { body: PaddlePage } = await callSenderApi<PaddlePage>(client, 'GET', url, { signal });
        const body: PaddlePage = page.body;
        if (!Array.isArray(body?.data)) throw new Error(`Paddle API answered ${url.pathname} without a data list.`);
        const inWindow = body.data.filter((e) => !(isoMs(e.occurred_at) < since.getTime()));
        yield inWindow;
        const next: string | undefined = body.meta?.pagination?.has_more && inWindow.length === body.data.length ? body.meta.pagination.next : undefined;
        url = next ? sameOriginLink(next, settings.apiBase, client.provider) : undefined;
      }
    },
  };
}

/**
 * Recover the Paddle notifications hookrun missed: list the events of the
 * mirror's types since `since` and store each page as it arrives, as
 * `/webhooks/payments` with PAYMENTS_PROVIDER=paddle does: source `payments`,
 * key `event_id`, type `event_type`, the event's JSON; the Paddle mirror
 * processes them. Already stored ones are left alone.
 */
export async function reconcilePaddle(input: {
  api: PaddleEventsApi;
  writer: Pick<EventWriter, 'write'>;
  since: Date;
  onProgress?: ReconcileProgress;
  signal?: AbortSignal;
}): Promise<ReconcileSummary> {
  return storeListedPages({
    writer: input.writer,
    source: 'payments',
    since: input.since,
    pages: mapPages(input.api.listEvents(input.since, RECONCILED_PADDLE_TYPES, input.signal), (e) => ({
      key: e.event_id,
      type: e.event_type,
      payloadJson: stringifyExactJson(e),
      atMs: isoMs(e.occurred_at),
    })),
    onProgress: input.onProgress,
    signal: input.signal,
  });
}
