import { z } from 'zod';
import { EVENT_STATUSES, FILTER_STATUSES } from '../db/events.js';

/**
 * The zod schemas of the admin API's query strings and bodies: admin.ts
 * validates every request with them, and openapi.ts builds the documented
 * parameters and bodies from them (`z.toJSONSchema`), so the description
 * cannot drift from what the API accepts.
 */

/** The longest page any admin listing returns. */
export const MAX_PAGE = 200;
const cursor = z
  .string()
  .regex(/^\d{1,15}$/, 'cursor must be the nextCursor of the previous page')
  .describe('the `nextCursor` of the previous page');
const limit = z.coerce.number().int().min(1).max(MAX_PAGE).describe('page size');
const handlerName = z.string().regex(/^[a-z0-9][a-z0-9-]{0,99}$/, 'a handler name: lowercase letters, digits and dashes (its file name)');
/** A source filter: a route name, well formed here; the route checks it is one the project receives (known-sources.ts). */
export const sourceName = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,31}$/, "a source is a route name like payments, auth or a platform.json sender's (lower-case letters, digits and -)")
  .describe("only this source: a shipped route (payments, auth, …) or a platform.json sender's");
/** A date or time as a person types it; read by time/instant.ts's one rule (an ISO 8601 date or time; without an offset, UTC). */
export const instantText = z.string().min(1).max(40);
const eventType = z.string().min(1).max(255).describe('exact event type, e.g. user.created');

/** `GET /api/events` */
export const eventListQuery = z.object({
  source: sourceName.optional(),
  status: z
    .enum(FILTER_STATUSES as unknown as [string, ...string[]])
    .optional()
    .describe(
      "only this status: the event's (pending, processed, ignored, failed, dead), or with `handler` that handler's delivery's (also running, parked, debounced)",
    ),
  type: eventType.optional(),
  parked: z.enum(['true', 'false']).optional().describe("`true`: only events with a handler delivery parked (an `order: 'key'` handler out of attempts)"),
  handler: handlerName.optional().describe('only events with a delivery to this handler (with `status`: the status of that delivery)'),
  from: instantText.optional().describe('received at or after this time (e.g. 2025-01-31T09:00:00Z; without an offset, UTC)'),
  to: instantText.optional().describe('received before this time (e.g. 2025-01-31; without an offset, UTC)'),
  search: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe(
      'an id, an exact idempotency key, the start of a type (`invoice.` finds `invoice.paid`), or an id, email or uuid the payload holds (`cus_123` finds the events whose payload has it, or its key; `payload:cus_123` the payload only)',
    ),
  where: z
    .string()
    .min(1)
    .max(400)
    .optional()
    .describe(
      'a value in the payload: `path = value` (equals; a number or boolean matches its JSON form too) or `path ~ value` (contains), e.g. `data.object.customer = cus_123`',
    ),
  limit: limit.default(50),
  cursor: cursor.optional(),
});

/** `POST /api/events/replay` */
export const replayBody = z.object({
  status: z.enum(EVENT_STATUSES).describe('replay every event of this status'),
  source: sourceName.optional(),
  type: eventType.optional(),
  actor: z.string().min(1).max(100).optional().describe("who asks, recorded in each replayed delivery's history after the signed-in name, e.g. cli:ana@laptop"),
});

/** `POST /api/events/{id}/replay`: optionally one handler only. */
export const replayQuery = z.object({
  handler: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]*$/, 'a handler name: lowercase letters, digits and dashes (its file name)')
    .max(100)
    .optional()
    .describe("run only this handler again; the event's other handlers are not run"),
  actor: z.string().min(1).max(100).optional().describe("who asks, recorded in the delivery's history after the signed-in name, e.g. cli:ana@laptop"),
  fromStart: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => v === 'true')
    .describe("run every step again: forget the deliveries' stored steps (default: steps that succeeded keep their results)"),
});

/** `GET /api/cron/runs` */
export const runsQuery = z.object({
  job: z.string().min(1).max(100).optional().describe('only this job'),
  status: z.enum(['pending', 'running', 'succeeded', 'failed', 'skipped']).optional().describe('only runs with this status'),
  limit: limit.default(50),
  cursor: cursor.optional(),
});

/** `GET /api/cron/jobs` */
export const jobsQuery = z.object({ count: z.coerce.number().int().min(1).max(50).default(3).describe('how many next runs per job') });

/** `POST /api/cron/jobs/{job}/run` */
export const runQuery = z.object({ trigger: z.enum(['http', 'cli']).default('http').describe('how the run is recorded') });

/** `POST /api/cron/jobs/{job}/resume` */
export const resumeBody = z.object({ catchUp: z.boolean().default(false).describe("also run the ticks skipped while paused (by the job's catch-up policy)") });

/** `POST /api/cron/jobs/{job}/backfill` */
export const backfillBody = z.object({
  from: instantText.describe('first tick time (inclusive; without an offset, UTC)'),
  to: instantText.describe('last tick time (inclusive; without an offset, UTC), not in the future'),
  dryRun: z.boolean().default(false).describe('only list the ticks and which already have a run'),
});

/** `GET /api/mirror/{table}` */
export const mirrorQuery = z.object({
  limit: limit.default(50),
  search: z.string().min(1).max(100).optional().describe('only rows whose id, email, name or *_id contains this'),
});

/** `POST /api/payments/reconcile` */
export const reconcileBody = z.object({
  since: z.string().min(1).max(40).describe('a duration back from now (`3d`, `12h`) or an ISO date, at most 30 days back'),
});

/** `POST /api/retention/prune` */
export const pruneBody = z.object({ dryRun: z.boolean().default(false).describe('only count what would be deleted') });

/** `GET /api/events/stream` */
export const streamQuery = z.object({
  source: sourceName.optional(),
  type: eventType.optional(),
  lastEventId: z
    .string()
    .regex(/^\d{1,15}$/)
    .optional()
    .describe('resume after this inbox id (the `Last-Event-ID` header does the same)'),
});

/** Parse with zod; the first problem, named by its field, for a 400 `bad_request`. */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0]!;
  return `${issue.path.join('.') || 'request'}: ${issue.message}.`;
}
