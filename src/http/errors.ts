import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { AppError } from '../errors.js';
import type { Logger } from '../log.js';

/** The JSON error body of every route, `{"error":{"code","message"}}`: one shape clients can parse (docs/design.md, error codes). */
export function errorResponse(c: Context, status: number, code: string, message: string): Response {
  return c.json({ error: { code, message } }, status as ContentfulStatusCode);
}

/** The 404 of a path no route serves (the app's, and the operator routes' once loaded: http/build-app.ts). */
export function routeNotFound(c: Context): Response {
  return errorResponse(c, 404, 'not_found', `No route ${c.req.method} ${c.req.path}. See /openapi.json for the routes.`);
}

/**
 * The one place errors become HTTP answers: an `AppError` keeps its status,
 * code and message; anything else is a 500 with a generic message, and its
 * detail goes to the log only (never a stack or a secret in a response).
 */
export function createErrorHandler(log: Logger) {
  return (error: Error, c: Context): Response => {
    if (error instanceof AppError) return errorResponse(c, error.status, error.code, error.message);
    log.error({ err: { message: error.message, stack: error.stack }, path: c.req.path }, 'unhandled error');
    return errorResponse(c, 500, 'internal_error', 'Something went wrong on our side; the request was not completed. Retry, and check the server log.');
  };
}
