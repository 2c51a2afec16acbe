import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { AdminApiDeps } from '../admin.js';
import { csrfToken } from '../admin-auth.js';

/** The session cookie; scoped to /admin, HttpOnly, SameSite=Strict. */
export const SESSION_COOKIE = 'hookrun_admin';

/** Headers on every console page: only our own script file (no inline script), no framing, no caching. */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin', // with no-referrer Chromium sends "Origin: null" on our own form posts
  'cache-control': 'no-store',
};

/** A dashboard page with the security headers. */
export function page(c: Context, body: string, statusCode: number = 200): Response {
  return c.html(body, statusCode as ContentfulStatusCode, SECURITY_HEADERS);
}

/** Whether the browser reached us over HTTPS (directly or through a proxy that says so): the cookie is then Secure. */
export function isHttps(c: Context): boolean {
  return new URL(c.req.url).protocol === 'https:' || c.req.header('x-forwarded-proto') === 'https';
}

/** Refuse a cross-site form post: a browser always sends Origin on POST; it must be this host. */
export function sameOrigin(c: Context): boolean {
  const origin = c.req.header('origin');
  if (origin === undefined || origin === 'null') return origin === undefined;
  try {
    const host = c.req.header('x-forwarded-host') ?? c.req.header('host') ?? new URL(c.req.url).host;
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}

/** One string field of a posted form; undefined when absent. */
export async function formField(c: Context, name: string): Promise<string | undefined> {
  const body = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
  const value = (body as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

/** The CSRF token of the request's session (the forms carry it). */
export const csrfOf = (c: Context, deps: AdminApiDeps) => csrfToken(getCookie(c, SESSION_COOKIE) ?? '', deps.config.adminToken!);

/** Who acted from the console: the session's short id (its random part's start), never the cookie or the token. */
export function consoleActor(c: Context): string {
  const random = (getCookie(c, SESSION_COOKIE) ?? '').split('.')[1] ?? '';
  return `console (session ${random.slice(0, 8)})`;
}
