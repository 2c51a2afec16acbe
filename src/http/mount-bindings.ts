import { getPath } from 'hono/utils/url';

/**
 * What a host that serves hookrun under a path (`hookrun/next` at
 * `/api/hookrun`) passes in the request's bindings (`app.fetch(request,
 * bindings)`): where hookrun's own paths start, so the console's URLs are
 * the browser's. Not a header: a caller cannot choose it.
 */
export interface MountBindings {
  /** The URL path hookrun is served under, without a trailing slash (`/api/hookrun`); empty or absent at the root. */
  mountPath?: string;
  /** The path inside hookrun's app (`/webhooks/stripe`), as sent: the request keeps its own URL, which a sender may have signed (Twilio). */
  path?: string;
}

/**
 * Hono's path reader for hookrun's apps: the bindings' `path` when a host
 * passes one, else the request URL's path. A mounted request is routed
 * without being copied to another URL.
 */
export function pathInsideMount(request: Request, options?: { env?: unknown }): string {
  const inner = (options?.env as MountBindings | undefined)?.path;
  return inner === undefined ? getPath(request) : getPath({ url: `http://mount${inner}` } as Request);
}
