import type { z } from 'zod';
import { parsePayloadMatch, type PayloadMatch } from '../db/event-filter.js';
import { EVENT_STATUSES, type ListEventsQuery } from '../db/events.js';
import { AppError } from '../errors.js';
import type { eventListQuery } from './admin-schemas.js';
import { requestInstant } from './admin-request.js';

/** A `where` payload search, or a 400 `bad_request` carrying parsePayloadMatch's message (what to type instead). */
export function payloadMatchOf(text: string): PayloadMatch {
  try {
    return parsePayloadMatch(text);
  } catch (error) {
    throw new AppError('bad_request', (error as Error).message);
  }
}

/** `GET /api/events`' validated query as the list's filter and page. */
export function eventListFilter(q: z.infer<typeof eventListQuery>): ListEventsQuery {
  if (q.status && !q.handler && !(EVENT_STATUSES as readonly string[]).includes(q.status))
    throw new AppError(
      'bad_request',
      `status "${q.status}" is a delivery's: give the handler too (handler=<name>), or use one of ${EVENT_STATUSES.join(', ')}.`,
    );
  return {
    source: q.source,
    status: q.status,
    type: q.type,
    parked: q.parked === 'true',
    handler: q.handler,
    from: q.from === undefined ? undefined : requestInstant(q.from, 'from'),
    to: q.to === undefined ? undefined : requestInstant(q.to, 'to'),
    search: q.search,
    where: q.where === undefined ? undefined : payloadMatchOf(q.where),
    limit: q.limit,
    before: q.cursor === undefined ? undefined : Number(q.cursor),
  };
}
