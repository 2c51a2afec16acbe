import type { Context, MiddlewareHandler } from 'hono';
import type { MountBindings } from '../mount-bindings.js';

/** The console's URLs, as its pages and redirects write them. */
const CONSOLE_ROOT = '/admin';

/** An attribute that holds one of the console's URLs: `href="/admin…"`, `action="/admin…"`, `src="/admin…"` (every value the pages interpolate is escaped, so a `"` here is always ours). */
const CONSOLE_URL_ATTRIBUTE = /(\s(?:href|action|src)=")\/admin(?=[/?#"])/g;

/** A cookie scoped to the console: `Path=/admin`, as `setCookie` writes it. */
const CONSOLE_COOKIE_PATH = /(;\s*Path=)\/admin(?=;|$)/i;

/**
 * A path safe in an HTML attribute and a cookie's `Path`: every character
 * but letters, digits and a few path characters percent-encoded, so never
 * `"`, `<`, `&` (markup), `;` or `,` (the end of a cookie's attribute). The
 * mount's segments come from the request's URL, which the caller chooses.
 */
export function safeMountPath(path: string): string {
  return path.replace(/\/+$/, '').replace(/[^A-Za-z0-9\-._~%!$'()*+=:@/]/gu, (char) => encodeURIComponent(char));
}

/** The request's mount path from its bindings; empty under `hookrun start` (whose bindings are Node's `incoming`/`outgoing`). */
export function mountPathOf(c: Context): string {
  const path = (c.env as MountBindings | undefined)?.mountPath;
  return typeof path === 'string' ? safeMountPath(path) : '';
}

/** The response with the mount's path before each of the console's URLs (a function replaces, so a `$` in the path is only text). */
async function prefixed(response: Response, mount: string): Promise<Response> {
  const headers = new Headers(response.headers);
  const location = headers.get('location');
  if (location?.startsWith(CONSOLE_ROOT)) headers.set('location', mount + location);
  const cookies = headers.getSetCookie();
  if (cookies.length > 0) {
    headers.delete('set-cookie');
    for (const cookie of cookies)
      headers.append(
        'set-cookie',
        cookie.replace(CONSOLE_COOKIE_PATH, (_, path: string) => `${path}${mount}${CONSOLE_ROOT}`),
      );
  }
  if (!(headers.get('content-type') ?? '').startsWith('text/html') || response.body === null) {
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }
  const body = (await response.text()).replace(CONSOLE_URL_ATTRIBUTE, (_, attribute: string) => `${attribute}${mount}${CONSOLE_ROOT}`);
  headers.delete('content-length');
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}

/**
 * The console's pages write their URLs from `/admin` (links, forms, the
 * script, redirects, the session cookie's `Path`). Under a mount path each
 * of them gets that prefix here, in one place, so the pages stay unaware of
 * where they are served; at the root nothing changes. The script finds the
 * stream and the login page from its own URL.
 */
export function underMountPath(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const mount = mountPathOf(c);
    if (mount === '') return;
    const response = await prefixed(c.res, mount);
    c.res = undefined; // replaced whole: Hono's setter would otherwise copy the old Location and Set-Cookie back over the new ones
    c.res = response;
  };
}
