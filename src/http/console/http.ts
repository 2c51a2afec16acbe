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

/** The host the request names: a proxy's `X-Forwarded-Host`, else `Host`. */
const requestedHost = (c: Context) => c.req.header('x-forwarded-host') ?? c.req.header('host') ?? new URL(c.req.url).host;

/**
 * Refuse a cross-site form post: a browser always sends Origin on POST; it
 * must be the host the request names, or PUBLIC_URL's origin (the origin
 * people open the console at, when a proxy in front rewrites `Host` and sends
 * no `X-Forwarded-Host`). An answer that says why, or undefined when it may go on.
 */
export function crossSiteRefusal(c: Context, publicUrl: URL | undefined): string | undefined {
  const origin = c.req.header('origin');
  if (origin === undefined) return undefined;
  let sender: URL | undefined;
  try {
    sender = origin === 'null' ? undefined : new URL(origin);
  } catch {
    sender = undefined;
  }
  if (sender && (sender.host === requestedHost(c) || sender.origin === publicUrl?.origin)) return undefined;
  const known = publicUrl ? `, nor PUBLIC_URL (${publicUrl.origin})` : '';
  return `Cross-site form posts are refused: this form's Origin is not the host this request names (${requestedHost(c)})${known}. If a proxy in front of hookrun rewrites Host, set PUBLIC_URL to the origin you open the console at (or have the proxy send X-Forwarded-Host), and restart hookrun.`;
}

/** One string field of a posted form; undefined when absent. */
export async function formField(c: Context, name: string): Promise<string | undefined> {
  const body = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
  const value = (body as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

/** The CSRF token of the request's session (the forms carry it); empty before sign-in. */
export function csrfOf(c: Context, deps: AdminApiDeps): string {
  const name = c.get('signedIn')?.name;
  const operator = deps.config.operators.find((o) => o.name === name);
  return operator ? csrfToken(getCookie(c, SESSION_COOKIE) ?? '', operator) : '';
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

/** Why a console page refused (the message of its `<p class="error">`), for the audit. */
export async function pageError(response: Response): Promise<string> {
  const message = /<p class="error">([^<]*)<\/p>/.exec(await response.text())?.[1];
  return message === undefined ? `HTTP ${response.status}` : message.replace(/&(?:amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity] ?? entity);
}
