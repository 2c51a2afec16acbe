import { createNextRoute, type NextRoute } from '../../src/next/route.js';
import { SECRETS } from '../helpers/config.js';

/** Where the product mounts hookrun: `app/api/hookrun/[...path]/route.ts`. */
export const MOUNT = '/api/hookrun';

/** The product's origin, as the browser sees it. */
export const ORIGIN = 'https://product.example';

/** hookrun as a Next.js app mounts it (`hookrun/next`), on the PostgreSQL at `databaseUrl`, with the project in `project`. */
export function mountedRoute(databaseUrl: string, project: string, env: Record<string, string> = {}): NextRoute {
  return createNextRoute({
    project,
    env: { DATABASE_URL: databaseUrl, ADMIN_TOKEN: SECRETS.admin, DATABASE_WEBHOOK_SECRET: SECRETS.database, LOG_LEVEL: 'silent', ...env },
    after: (task) => void task(),
  });
}

/**
 * A request as Next.js hands it to the catch-all route: the whole URL, and
 * the segments after the mount as `params.path` (a promise, as since Next.js 15).
 */
export function callMounted(route: NextRoute, url: string, init: RequestInit = {}): Promise<Response> {
  return nextRouter(route)(new Request(new URL(url, ORIGIN), { redirect: 'manual', ...init }));
}

/** What Next.js does for the app: a request under the mount goes to the route with its segments; anything else is the app's 404. */
export function nextRouter(route: NextRoute): (request: Request) => Promise<Response> {
  return (request) => {
    const { pathname } = new URL(request.url);
    if (!pathname.startsWith(MOUNT + '/')) return Promise.resolve(new Response('the product app: not found', { status: 404 }));
    const path = pathname.slice(MOUNT.length + 1).split('/');
    return route[request.method.toUpperCase() as keyof NextRoute](request, { params: Promise.resolve({ path }) });
  };
}
