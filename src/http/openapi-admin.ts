import { z } from 'zod';
import { MIRROR_TABLES } from '../db/mirror-read.js';
import { MAX_EVENT_STREAMS } from './event-stream.js';
import { RECONCILE_SENDERS } from '../reconcile/senders.js';
import {
  backfillBody,
  eventListQuery,
  jobsQuery,
  mirrorQuery,
  pruneBody,
  reconcileBody,
  replayBody,
  replayQuery,
  resumeBody,
  runQuery,
  runsQuery,
  streamQuery,
} from './admin-schemas.js';
import { bulkReplayBody, replayListQuery } from './replay-schemas.js';
import { errors, header, json, path, type Json } from './openapi-parts.js';
import { issueListQuery } from './issue-schemas.js';
import { auditListQuery } from './audit-routes.js';

/** A zod schema as JSON Schema of what the caller sends (`io: 'input'`: before defaults and transforms). */
function inputSchema(schema: z.ZodType): Json & { properties?: Record<string, Json>; required?: string[] } {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  return rest;
}

/** The query parameters of a route, one per field of its schema, with its bounds, enum, pattern and default. */
function queryFrom(schema: z.ZodType): Json[] {
  const { properties = {}, required = [] } = inputSchema(schema);
  return Object.entries(properties).map(([name, { description, ...rest }]) => ({
    name,
    in: 'query',
    required: required.includes(name),
    description,
    schema: rest,
  }));
}

/** A JSON request body described by its schema. */
function bodyFrom(schema: z.ZodType): Json {
  return { required: true, content: { 'application/json': { schema: inputSchema(schema) } } };
}

const adminErrors = errors({ 400: ['bad_request'], 401: ['unauthorized'], 429: ['too_many_requests'], 503: ['not_configured', 'unavailable'] });
const notFound = errors({ 404: ['not_found'] });
const conflict = errors({ 409: ['conflict'] });
const eventId = path('id', 'event id', { type: 'integer', minimum: 1 });
const replayId = path('id', 'bulk replay id', { type: 'integer', minimum: 1 });
const issueId = path('id', 'issue id', { type: 'integer', minimum: 1 });

/** A viewer's token on an action: every POST needs the operator role. */
const viewerRefused = errors({ 403: ['forbidden'] });

function admin(method: 'get' | 'post', summary: string, extra: { parameters?: Json[]; requestBody?: Json } = {}, responses: Json = {}): Json {
  const refusals = method === 'post' ? { ...adminErrors, ...viewerRefused } : adminErrors;
  return { [method]: { tags: ['admin'], summary, security: [{ adminToken: [] }], ...extra, responses: { 200: json('OK'), ...refusals, ...responses } } };
}

/**
 * The admin API under `/api`. Query parameters and bodies come from the zod
 * schemas admin.ts validates with (admin-schemas.ts), so a bound, an enum or
 * a field documented here is the one the API enforces; a test sends each
 * documented maximum and one past it.
 */
export function adminPaths(): Record<string, Json> {
  return {
    ...eventPaths(),
    '/api/cron/jobs': admin('get', 'Cron jobs with schedule, next runs and last run', { parameters: queryFrom(jobsQuery) }),
    '/api/cron/runs': admin('get', 'Cron runs, newest first', { parameters: queryFrom(runsQuery) }),
    '/api/cron/jobs/{job}/run': admin(
      'post',
      'Run a job now; answers the run (status succeeded or failed)',
      { parameters: [path('job', 'job name'), ...queryFrom(runQuery)] },
      { ...notFound, ...conflict },
    ),
    '/api/cron/jobs/{job}/pause': admin(
      'post',
      'Pause a job on every instance: its scheduled ticks are recorded skipped until resumed (manual runs still run)',
      { parameters: [path('job', 'job name')] },
      notFound,
    ),
    '/api/cron/jobs/{job}/resume': admin(
      'post',
      'Resume a paused job; `catchUp` also runs the ticks skipped while paused',
      { parameters: [path('job', 'job name')], requestBody: bodyFrom(resumeBody) },
      notFound,
    ),
    '/api/cron/jobs/{job}/backfill': admin(
      'post',
      'Queue the ticks of a past range that have no run yet (each once; the scheduler runs them oldest first); `dryRun` only lists them',
      { parameters: [path('job', 'job name')], requestBody: bodyFrom(backfillBody) },
      notFound,
    ),
    '/api/handlers': admin(
      'get',
      "Handlers with their flow options, paused or not, deliveries running, waiting by reason (ready, concurrency, rate, debounce, batch, paused), failed (due again), parked and dead, and each one's top 5 waiting keys",
    ),
    '/api/handlers/{name}/pause': admin(
      'post',
      'Pause a handler on every instance, across restarts: its deliveries wait (none starts) until resumed',
      { parameters: [path('name', 'handler name')] },
      notFound,
    ),
    '/api/handlers/{name}/resume': admin(
      'post',
      'Resume a paused handler: its waiting deliveries start in their order, within its limits',
      { parameters: [path('name', 'handler name')] },
      notFound,
    ),
    '/api/mirror/{table}': admin(
      'get',
      'Rows of a mirror table, most recently changed first',
      { parameters: [path('table', 'which mirror', { type: 'string', enum: Object.keys(MIRROR_TABLES) }), ...queryFrom(mirrorQuery)] },
      notFound,
    ),
    '/api/retention/prune': admin(
      'post',
      'One retention pass now: finished events past EVENT_RETENTION_DAYS (keys kept), keys past DEDUPE_RETENTION_DAYS, cron runs past CRON_RUN_RETENTION_DAYS; `dryRun` only counts',
      { requestBody: bodyFrom(pruneBody) },
      notFound,
    ),
    '/api/audit': admin(
      'get',
      'The audit, newest first: every action taken or tried from the console, the admin API and the CLI, with the operator, their role, via (console, api, cli), action, target, outcome (ok, refused, failed) and detail',
      { parameters: queryFrom(auditListQuery) },
    ),
    '/api/issues': admin('get', 'Issues of a status (default open), most recently seen first, with the count of each status', {
      parameters: queryFrom(issueListQuery),
    }),
    '/api/issues/{id}': admin('get', 'One issue: kind, subject, occurrences, first and last seen, its lifecycle', { parameters: [issueId] }, notFound),
    '/api/issues/{id}/acknowledge': admin(
      'post',
      'Acknowledge an open issue: someone is on it, no notification until it is resolved and recurs',
      { parameters: [issueId] },
      { ...notFound, ...conflict },
    ),
    '/api/issues/{id}/resolve': admin('post', 'Resolve an issue by hand; it reopens (and is told again) if it recurs', { parameters: [issueId] }, notFound),
    '/api/senders': admin(
      'get',
      'Each sender route: its signing secret set or not (never any part of it), last delivery, events accepted and requests refused by reason in the last 24 h',
    ),
    '/api/changes': admin('get', "The WAL capture's state on this instance, with its last error message (`/ready` shows only its code)", {}, notFound),
    '/api/payments/reconcile': admin('post', 'Store the Stripe events the inbox is missing since `since`; needs STRIPE_SECRET_KEY', {
      requestBody: bodyFrom(reconcileBody),
    }),
    '/api/reconcile/{sender}': admin(
      'post',
      'Gap repair for a sender with an events or deliveries API since `since`: GitHub (redeliveries asked for; GITHUB_TOKEN, GITHUB_HOOK), Paddle (PADDLE_API_KEY), WorkOS (WORKOS_API_KEY), Clerk (users and organizations; CLERK_SECRET_KEY)',
      { parameters: [path('sender', 'which sender', { type: 'string', enum: [...RECONCILE_SENDERS] })], requestBody: bodyFrom(reconcileBody) },
      notFound,
    ),
  };
}

/** The events and bulk replay routes. */
function eventPaths(): Record<string, Json> {
  return {
    '/api/events': admin(
      'get',
      'List events, newest received first, with filters (source, status, type, handler, from/to, search, a payload `where`, parked) and cursor pagination; a payload search that is not an id, email or uuid reads newest stored first, stops after 1.5 s and answers `searchedTo` (the id it read down to) with `nextCursor`; a malformed `where` is a 400 `bad_request` saying why',
      { parameters: queryFrom(eventListQuery) },
    ),
    '/api/events/stream': admin(
      'get',
      `Server-sent events: \`event: ready\` once, then \`event: event\` per committed event (\`id:\` the inbox id, \`data:\` {id, source, key, type, receivedAt, payload}); 503 past ${MAX_EVENT_STREAMS} open API streams (console tabs have their own cap)`,
      { parameters: [...queryFrom(streamQuery), header('Last-Event-ID', 'resume after this inbox id')] },
    ),
    '/api/events/counts': admin('get', 'Number of events by status'),
    '/api/events/{id}': admin(
      'get',
      'One event with its payload, its attempts, and `request`: the HTTP request it came in ({headers (secrets masked), body, verification}), or null when it came without one',
      { parameters: [eventId] },
      notFound,
    ),
    '/api/events/{id}/replay': admin(
      'post',
      'Put one event back in the queue (all its handlers, or `handler` only)',
      { parameters: [eventId, ...queryFrom(replayQuery)] },
      { ...notFound, ...conflict },
    ),
    '/api/events/replay': admin('post', 'Replay every event of a status (and optionally a source and type)', { requestBody: bodyFrom(replayBody) }),
    '/api/replays': {
      ...admin(
        'post',
        'Bulk replay: events a filter selects (or `ids`), at `rate` per second, only events that exist now; `dry_run` answers the plan (how many, skipped and why, which handlers on how many) and writes nothing; otherwise 202 with the batch',
        { requestBody: bodyFrom(bulkReplayBody) },
        { 202: json('Started: the batch, advanced by the running instances') },
      ),
      ...admin('get', 'Bulk replays, newest first: who started what, when, and how far it got (every action is in /api/audit too)', {
        parameters: queryFrom(replayListQuery),
      }),
    },
    '/api/replays/{id}': admin('get', "One bulk replay's progress (replayed of total, status)", { parameters: [replayId] }, notFound),
    '/api/replays/{id}/cancel': admin(
      'post',
      'Stop a running bulk replay (events already put back stay so)',
      { parameters: [replayId] },
      { ...notFound, ...conflict },
    ),
  };
}
