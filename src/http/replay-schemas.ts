import { z } from 'zod';
import { EVENT_STATUSES } from '../db/events.js';
import { parsePayloadMatch, type EventFilter } from '../db/event-filter.js';
import { AppError } from '../errors.js';
import { DEFAULT_RATE, MAX_RATE, MIN_RATE } from '../replay/batches.js';
import { MAX_REPLAY_IDS, type ReplaySelection } from '../replay/selection.js';
import { instantText, sourceName } from './admin-schemas.js';
import { requestInstant } from './admin-request.js';

const handlerName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]*$/, 'a handler name: lowercase letters, digits and dashes (its file name)')
  .max(100);

/** `POST /api/replays`: a selection (filter fields, or `ids`), which handler, how fast, a dry run or not, and who asks. */
export const bulkReplayBody = z.object({
  source: sourceName.optional(),
  status: z.enum(EVENT_STATUSES).optional().describe('only this status (a delivery running right now is always skipped)'),
  type: z.string().min(1).max(255).optional().describe('exact event type, e.g. invoice.paid'),
  handled_by: handlerName
    .optional()
    .describe('only events with a delivery to this handler (with `status`: the status of that delivery) (the events list’s `handler` filter)'),
  from: instantText.optional().describe('received at or after this time (without an offset, UTC)'),
  to: instantText.optional().describe('received before this time (without an offset, UTC)'),
  search: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'an id, an exact idempotency key, the start of a type, or an id, email or uuid the payload holds (`cus_123`, `payload:cus_123` for the payload only)',
    ),
  where: z.string().min(1).max(400).optional().describe('a payload value: `data.object.customer = cus_123` (equals) or `path ~ text` (contains)'),
  parked: z.boolean().optional().describe('only events with a parked handler delivery'),
  ids: z
    .array(z.number().int().min(1))
    .min(1)
    .max(MAX_REPLAY_IDS)
    .optional()
    .describe(`event ids picked by hand (at most ${MAX_REPLAY_IDS}), instead of filters`),
  handler: handlerName.optional().describe("run only this handler again; the events' other handlers are not run"),
  rate: z.number().int().min(MIN_RATE).max(MAX_RATE).default(DEFAULT_RATE).describe('events put back per second'),
  dry_run: z.boolean().default(false).describe('only say what would be replayed; nothing is written'),
  actor: z.string().min(1).max(100).optional().describe('who asks, recorded in the audit after the signed-in name, e.g. cli:ana@laptop'),
});

/** The body as parsed. */
export type BulkReplayBody = z.output<typeof bulkReplayBody>;

/** `GET /api/replays` */
export const replayListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('page size'),
  cursor: z
    .string()
    .regex(/^\d{1,15}$/, 'cursor must be the nextCursor of the previous page')
    .optional()
    .describe('the `nextCursor` of the previous page'),
});

/** A payload search a person typed; a 400 with its rule otherwise. */
export function selectionWhere(text: string) {
  try {
    return parsePayloadMatch(text);
  } catch (error) {
    throw new AppError('bad_request', `The payload search (where) is not understood. ${(error as Error).message}`);
  }
}

/** The filter fields of a selection, as the events list and `POST /api/replays` name them. */
export interface SelectionFields {
  source?: string;
  status?: string;
  type?: string;
  handler?: string;
  from?: string;
  to?: string;
  search?: string;
  where?: string;
  parked?: boolean;
}

/** Filter fields (strings as typed) → the selection to plan; at least one field, and never with `ids`. */
export function selectionOf(fields: SelectionFields, ids: number[] | undefined): ReplaySelection {
  const filter: EventFilter = {
    source: fields.source,
    status: fields.status,
    type: fields.type,
    handler: fields.handler,
    from: fields.from === undefined ? undefined : requestInstant(fields.from, 'from'),
    to: fields.to === undefined ? undefined : requestInstant(fields.to, 'to'),
    search: fields.search,
    where: fields.where === undefined ? undefined : selectionWhere(fields.where),
    parked: fields.parked || undefined,
  };
  const filtered = Object.values(filter).some((value) => value !== undefined);
  if (ids !== undefined && filtered) throw new AppError('bad_request', 'Give ids or filters, not both: ids pick events by hand, filters select them.');
  if (ids !== undefined) return { ids };
  if (!filtered)
    throw new AppError(
      'bad_request',
      'Say which events to replay: ids, or at least one filter (status, source, type, handled_by, from, to, search, where, parked), e.g. {"status":"dead"}.',
    );
  for (const key of Object.keys(filter) as Array<keyof EventFilter>) if (filter[key] === undefined) delete filter[key];
  return { filter };
}
