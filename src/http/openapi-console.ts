import { path, query, type Json } from './openapi-parts.js';

/** A console page or form route: HTML, behind the session (a redirect to the login page without one). */
function page(method: 'get' | 'post', summary: string, parameters: Json[] = []): Json {
  return {
    [method]: {
      tags: ['dashboard'],
      summary,
      parameters,
      responses: {
        200: { description: 'HTML page', content: { 'text/html': {} } },
        303: { description: 'Redirect after a form post or to the login page' },
        401: { description: 'Wrong token' },
        503: { description: 'ADMIN_TOKEN is not set' },
      },
    },
  };
}

const eventId = path('id', 'event id', { type: 'integer' });
const numberId = (what: string) => path('id', what, { type: 'integer' });
const FILTERS = [
  query('source', 'filter'),
  query('status', 'filter'),
  query('type', 'exact event type'),
  query('handler', 'events this handler ran or owes'),
  query('from', 'received at or after (a date or time)'),
  query('to', 'received before (a date or time)'),
  query('q', 'an id, an exact key, a type prefix, or an id, email or uuid the payload holds (`cus_123`; `payload:cus_123` for the payload only)'),
  query('where', 'a payload value: `path = value` or `path ~ text`'),
  query('parked', '1: only events with a parked delivery'),
];

/** The console's pages at /admin (tag `dashboard`), so /openapi.json lists every route the app serves. */
export function consolePaths(): Record<string, Json> {
  return {
    '/admin': page(
      'get',
      'Overview: counts of every status, a chart over a range, what handlers, jobs and issues need (old list URLs redirect to /admin/events)',
      [query('range', '1h, 24h or 7d')],
    ),
    '/admin/login': {
      ...page('get', 'Login form'),
      ...page('post', 'Log in with ADMIN_TOKEN or your token of ADMIN_TOKENS (form field `token`); sets an HttpOnly session cookie'),
    },
    '/admin/logout': page('post', 'Log out'),
    '/admin/stream': page('get', 'The event stream (server-sent events) behind the session, for live updates'),
    '/admin/assets/console.js': page('get', 'The one script: live updates of the marked regions'),
    '/admin/events': page('get', 'Events, newest first, with every filter and keyset paging', [...FILTERS, query('cursor', 'next page')]),
    '/admin/events/{id}': page('get', 'One event: what happens next, its attempts per handler, the request it came in, its payload', [eventId]),
    '/admin/events/{id}/replay': page('post', 'Replay one event (form with CSRF token)', [eventId]),
    '/admin/events/{id}/payload.json': page('get', "One event's payload as raw JSON (to copy or save)", [eventId]),
    '/admin/events/replay': page('post', 'Replay all dead events (form with CSRF token)'),
    '/admin/replays/new': page('get', 'A bulk replay dry run of the events a filter (or `ids`) selects', [
      ...FILTERS,
      query('ids', 'event ids, comma-separated or repeated'),
    ]),
    '/admin/audit': page('get', 'The audit: every action taken or tried from the console, the admin API and the CLI, newest first', [
      query('operator', 'only what this operator did'),
      query('outcome', 'ok, refused or failed'),
      query('before', 'older entries'),
    ]),
    '/admin/replays': { ...page('get', 'Bulk replays and their progress, newest first'), ...page('post', 'Start a bulk replay (form with CSRF token)') },
    '/admin/replays/{id}': page('get', "A bulk replay's progress", [numberId('bulk replay id')]),
    '/admin/replays/{id}/cancel': page('post', 'Cancel a running bulk replay (form with CSRF token)', [numberId('bulk replay id')]),
    '/admin/issues': page('get', 'Issues by status (open, acknowledged, resolved)', [query('status', 'open, acknowledged or resolved')]),
    '/admin/issues/{id}': page('get', 'One issue', [numberId('issue id')]),
    '/admin/issues/{id}/acknowledge': page('post', 'Acknowledge an issue (form with CSRF token)', [numberId('issue id')]),
    '/admin/issues/{id}/resolve': page('post', 'Resolve an issue (form with CSRF token)', [numberId('issue id')]),
    '/admin/senders': page('get', 'Each sender route: secret configured or not, last delivery, accepted and refused in 24 h'),
    '/admin/handlers': page('get', 'Handlers: flow options, state, what their deliveries wait for'),
    '/admin/handlers/{name}': page('get', 'One handler: its state, recent failures and deliveries', [path('name', 'handler name')]),
    '/admin/handlers/{name}/pause': page('post', 'Pause a handler on every instance (form with CSRF token)', [path('name', 'handler name')]),
    '/admin/handlers/{name}/resume': page('post', 'Resume a paused handler (form with CSRF token)', [path('name', 'handler name')]),
    '/admin/jobs': page('get', 'Cron jobs: schedule in its zone, next runs, last run'),
    '/admin/jobs/{name}': page('get', "One job's run history with output, and a backfill form", [path('name', 'job name'), query('cursor', 'older runs')]),
    '/admin/jobs/{name}/backfill': page('post', 'Backfill a past range of ticks, or list them (form with CSRF token)', [path('name', 'job name')]),
    '/admin/cron/{job}/run': page('post', 'Run a cron job now (form with CSRF token)', [path('job', 'job name')]),
    '/admin/cron/{job}/pause': page('post', 'Pause a cron job on every instance (form with CSRF token)', [path('job', 'job name')]),
    '/admin/cron/{job}/resume': page('post', 'Resume a paused cron job (form with CSRF token)', [path('job', 'job name')]),
    '/admin/mirrors': page('get', 'The mirror tables with their row counts'),
    '/admin/mirror/{table}': page('get', 'A mirror table (users, organizations, memberships, customers, subscriptions), most recently changed first', [
      path('table', 'which mirror'),
      query('search', 'id, email, name or *_id contains'),
    ]),
    '/admin/settings': page('get', 'The effective configuration, read-only, every secret shown only as set or not set'),
  };
}
