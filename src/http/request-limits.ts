import type { Context, MiddlewareHandler } from 'hono';
import { socketAddress } from '../cron/routes.js';
import type { RejectionLog } from '../rejection-log.js';
import type { BodyBudget } from '../webhooks/body-budget.js';
import { holdBody, isClientGone, readLimitedBody, releaseBody } from '../webhooks/body-reader.js';

/** The largest body of an admin API, dashboard or cron request (a login form, a replay filter): 64 KiB. */
export const ROUTE_BODY_MAX_BYTES = 64 * 1024;

/** A receiver (`POST /webhooks/<route>`) reads, limits and counts its own body. */
function isReceiver(c: Context): boolean {
  return c.req.method === 'POST' && c.req.path.startsWith('/webhooks/');
}

function hasBody(c: Context): boolean {
  if (c.req.method === 'GET' || c.req.method === 'HEAD') return false;
  const length = c.req.header('content-length');
  return (length !== undefined && length !== '0') || c.req.header('transfer-encoding') !== undefined;
}

/**
 * Every route but the receivers: the body is read here, before any handler
 * sees it, within ROUTE_BODY_MAX_BYTES (413 on a larger `Content-Length`
 * before a byte is read, or as soon as a chunked body passes it) and from the
 * same in-flight budget as webhook bodies, so a login form cannot take the
 * process's memory. The handler then reads the bytes held here.
 */
export function limitRouteBodies(budget: BodyBudget): MiddlewareHandler {
  const limit = { maxBytes: ROUTE_BODY_MAX_BYTES, setting: 'the limit of /api, /admin and /cron requests', budget };
  return async (c, next) => {
    if (isReceiver(c) || !hasBody(c)) return next();
    const held = holdBody(c);
    try {
      let body: Uint8Array;
      try {
        body = await readLimitedBody(c, limit, held);
      } catch (error) {
        if (isClientGone(error)) return void (c.res = new Response(null, { status: 400 }));
        throw error;
      }
      c.req.raw = new Request(c.req.url, { method: c.req.method, headers: c.req.raw.headers, body: body as Uint8Array<ArrayBuffer> });
      await next();
    } finally {
      releaseBody(budget, held);
    }
  };
}

/** Refusals worth counting, by status; their reason is the error code of that status. */
const REASONS: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  405: 'method_not_allowed',
  408: 'request_timeout',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'too_many_requests',
};

const ROUTES = ['/health', '/ready', '/metrics', '/openapi.json', '/docs', '/api', '/admin', '/cron', '/webhooks'];

/** A bounded label for the route: its first path segment (the login form by name), never the path as sent. */
function routeLabel(path: string): string {
  if (path === '/admin/login') return path;
  const first = `/${path.split('/')[1] ?? ''}`;
  return ROUTES.includes(first) ? first : 'other';
}

/**
 * Every refused request but the receivers' (they report their own, with the
 * error code): counted by route and reason, logged a few a minute with the
 * client's address.
 */
export function countRejections(rejections: RejectionLog): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const reason = REASONS[c.res.status];
    if (reason === undefined || isReceiver(c)) return;
    const route = routeLabel(c.req.path);
    rejections.rejected(
      route,
      reason,
      { method: c.req.method, status: c.res.status, client: socketAddress(c) },
      `request refused: ${c.res.status} ${reason} on ${route}`,
    );
  };
}
