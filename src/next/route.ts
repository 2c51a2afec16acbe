/**
 * `hookrun/next`: hookrun inside a Next.js app. One catch-all route serves
 * the same app `hookrun start` serves (receivers, `/cron/<job>`, the admin
 * API), built from the same project, on PostgreSQL. Each request commits
 * before it answers, exactly as with `hookrun start`; the events it stored
 * are processed after the answer (Next.js `after()`), and a drain route
 * called every minute picks up retries, due cron runs and whatever a
 * function cut short left behind.
 */
import { DRAIN_JOB } from '../cron/vercel-config.js';
import { ConfigError, messageOf } from '../errors.js';
import type { DrainReport } from '../service-drain.js';
import { bearerToken, secureEqual } from '../secure-compare.js';
import type { MountBindings } from '../http/mount-bindings.js';
import { MountedService, type MountSettings } from './mounted-service.js';
import { continueBurst, continuationOf } from './continue-drain.js';

/** How the mount is set up; every field is optional. */
export interface NextRouteOptions extends MountSettings {
  /**
   * The route's `maxDuration` in seconds (default 60): pass the one the route exports. Processing stops
   * 2 s before it: claims are sized to the time left, each delivery commits on its own, a handler's time
   * limit ends there, and a delivery with too little time left goes back unstarted for the next pass.
   */
  maxDuration?: number;
  /** Processing after a webhook's answer may claim new work for this long (ms, default 10,000), within `maxDuration`. */
  processBudgetMs?: number;
  /** The drain route may claim new work for this long (ms, default 45,000), within `maxDuration`. */
  drainBudgetMs?: number;
  /** Runs work after the response is sent; default Next.js `after` (pass `waitUntil` from `@vercel/functions` or your platform's own). */
  after?: (task: () => Promise<unknown>) => void;
  /** The URL path the route is mounted at, when it is not a catch-all route (e.g. `/api/hookrun`); a catch-all's own segments are used otherwise. */
  basePath?: string;
}

/** The second argument Next.js passes a route handler: the dynamic segments, a promise since Next.js 15. */
export interface NextRouteContext {
  params?: Promise<Record<string, string | string[] | undefined>> | Record<string, string | string[] | undefined>;
}

/** A Next.js App Router route handler. */
export type NextRouteHandler = (request: Request, context?: NextRouteContext) => Promise<Response>;

/** The handlers to export from `app/<path>/[...hookrun]/route.ts`. */
export interface NextRoute {
  GET: NextRouteHandler;
  POST: NextRouteHandler;
  PUT: NextRouteHandler;
  PATCH: NextRouteHandler;
  DELETE: NextRouteHandler;
  HEAD: NextRouteHandler;
  OPTIONS: NextRouteHandler;
}

/** The drain route under the mount: Vercel Cron calls it every minute (`hookrun vercel` writes the entry). */
export const DRAIN_PATH = `/cron/${DRAIN_JOB}`;

const DEFAULT_PROCESS_BUDGET_MS = 10_000;
const DEFAULT_DRAIN_BUDGET_MS = 45_000;
/** Vercel's default `maxDuration` for a function on the Hobby plan without Fluid compute is 10 s; deploy.md's route exports 60. */
const DEFAULT_MAX_DURATION_S = 60;
/** Processing ends this long before `maxDuration`: time to settle, answer and flush the log. */
const ANSWER_RESERVE_MS = 2_000;
/** Below this `maxDuration` nothing useful fits after the reserve. */
const MIN_MAX_DURATION_S = 5;

/** A request's path split at the mount: where hookrun is served (`/api/hookrun`, empty at the root) and the path inside hookrun's app. */
interface MountedPath {
  mount: string;
  path: string;
}

/** The path inside hookrun's app: the catch-all's segments as they arrived (still encoded), else the URL less `basePath`; the rest is the mount. */
async function splitAtMount(url: URL, context: NextRouteContext | undefined, basePath: string | undefined): Promise<MountedPath> {
  const at = (path: string): MountedPath => ({ mount: url.pathname.slice(0, url.pathname.length - path.length).replace(/\/+$/, ''), path });
  if (basePath !== undefined) {
    const base = basePath.replace(/\/+$/, '');
    if (url.pathname.startsWith(base + '/')) return { mount: base, path: url.pathname.slice(base.length) };
    return url.pathname === base ? { mount: base, path: '/' } : { mount: '', path: url.pathname };
  }
  const params = await context?.params;
  const segments = Object.values(params ?? {}).find((value): value is string[] => Array.isArray(value));
  if (!segments) return { mount: '', path: url.pathname };
  if (segments.length === 0) return { mount: url.pathname.replace(/\/+$/, ''), path: '/' };
  const raw = url.pathname.split('/');
  return at('/' + raw.slice(raw.length - segments.length).join('/'));
}

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const errorBody = (status: number, code: string, message: string) => json(status, { error: { code, message } });

type After = (task: () => Promise<unknown>) => void;

/** Next.js's own `after`, loaded from the app's `next` package; without it (outside Next.js) the task runs without holding the response, and the log says so. */
async function nextAfter(log: { info(msg: string): void; warn(msg: string): void } | undefined): Promise<After> {
  try {
    const { after } = (await import('next/server.js' as string)) as { after?: After };
    if (typeof after === 'function') {
      log?.info('hookrun processes the events a request stored after answering it, with Next.js after()');
      return after;
    }
  } catch {
    // not inside a Next.js app
  }
  log?.warn(
    'next/server has no after() (Next.js 15.1 or later has it): events are processed without holding the function, which a serverless platform may freeze; pass createNextRoute({ after: waitUntil }), and the drain route takes over what is left',
  );
  return (task) => void task();
}

/**
 * Build the route handlers. In `app/api/[...hookrun]/route.ts`:
 * `export const { GET, POST } = createNextRoute({ project: 'hookrun' });`
 * with `export const runtime = 'nodejs'`, and next.config wrapped in
 * `withHookrun(…)` (with-hookrun.ts): the receivers at `/api/webhooks/<source>`, jobs at
 * `/api/cron/<job>`, and the drain at `/api/cron/hookrun-drain`.
 */
export function createNextRoute(options: NextRouteOptions = {}): NextRoute {
  const mounted = new MountedService(options);
  const processBudgetMs = options.processBudgetMs ?? DEFAULT_PROCESS_BUDGET_MS;
  const drainBudgetMs = options.drainBudgetMs ?? DEFAULT_DRAIN_BUDGET_MS;
  const maxDuration = options.maxDuration ?? DEFAULT_MAX_DURATION_S;
  if (!Number.isFinite(maxDuration) || maxDuration < MIN_MAX_DURATION_S)
    throw new TypeError(`createNextRoute({ maxDuration: ${maxDuration} }): pass the route's maxDuration in seconds, at least ${MIN_MAX_DURATION_S}.`);
  let after: Promise<After> | undefined;
  const schedulerOf = (log: Parameters<typeof nextAfter>[0]): Promise<After> => (after ??= options.after ? Promise.resolve(options.after) : nextAfter(log));

  const handle: NextRouteHandler = async (request, context) => {
    // The platform may end the function maxDuration after the request arrived: processing finishes before then.
    const finishBy = performance.now() + maxDuration * 1000 - ANSWER_RESERVE_MS;
    const url = new URL(request.url);
    const { mount, path } = await splitAtMount(url, context, options.basePath);
    let service;
    try {
      service = await mounted.get();
    } catch (error) {
      if (error instanceof ConfigError) return errorBody(503, 'not_configured', error.message);
      return errorBody(503, 'unavailable', 'hookrun could not start in this function; the function log says why. Retry shortly.');
    }
    const log = service.config.logLevel === 'silent' ? undefined : mounted.logger();
    if (path === DRAIN_PATH) {
      const { cronSecret: secret, cronSecretProblem } = service.config;
      if (cronSecretProblem !== undefined) return errorBody(503, 'not_configured', cronSecretProblem);
      if (secret === undefined)
        return errorBody(
          403,
          'forbidden',
          `Set CRON_SECRET (16+ characters) to use ${DRAIN_PATH}: Vercel Cron sends it as Authorization: Bearer <CRON_SECRET>.`,
        );
      if (!secureEqual(bearerToken(request.headers.get('authorization') ?? undefined), secret))
        return errorBody(401, 'unauthorized', 'Send Authorization: Bearer <CRON_SECRET>; the token is missing or wrong.');
      const continuation = { drainUrl: url.origin + mount + DRAIN_PATH, secret, log };
      const onDemand = service.onDemand;
      const hop = continuationOf(request);
      if (hop > 0) {
        // hookrun's own call for the rest of a burst: answered at once, the pass runs after the answer.
        (await schedulerOf(log))(() =>
          onDemand
            .drain(drainBudgetMs, finishBy)
            .then((report) => (log?.info({ ...report, pass: hop }, 'drain pass'), continueBurst(report, hop + 1, continuation)))
            .catch((error: unknown) => log?.warn({ err: { message: messageOf(error) } }, 'drain pass failed; the scheduled drain takes over')),
        );
        return json(202, { continuing: true, pass: hop });
      }
      const report: DrainReport = await onDemand.drain(drainBudgetMs, finishBy);
      log?.info(report, 'drain pass');
      if (report.budgetExhausted) (await schedulerOf(log))(() => continueBurst(report, 1, continuation));
      return json(200, report);
    }
    // Routed at its path inside hookrun, with its own URL (the console writes its URLs under the mount).
    const bindings: MountBindings = { mountPath: mount, path };
    const response = await service.app.fetch(request, bindings);
    const stored = request.method === 'POST' && response.status >= 200 && response.status < 300 && /^\/(webhooks|api)\//.test(path);
    // An event stored while a pass runs joins it (the answer that started the pass holds the function for it);
    // otherwise a pass starts after this answer, unless one has started by then.
    if (stored && !service.onDemand.join()) {
      const onDemand = service.onDemand;
      const continuation = { drainUrl: url.origin + mount + DRAIN_PATH, secret: service.config.cronSecret, log };
      (await schedulerOf(log))(() =>
        onDemand.join()
          ? Promise.resolve()
          : onDemand.process(processBudgetMs, finishBy).then(
              (report) => continueBurst(report, 1, continuation),
              (error: unknown) => log?.warn({ err: { message: messageOf(error) } }, 'processing after the answer failed; the drain route picks the events up'),
            ),
      );
    }
    return response;
  };
  return { GET: handle, POST: handle, PUT: handle, PATCH: handle, DELETE: handle, HEAD: handle, OPTIONS: handle };
}

export type { DrainReport } from '../service-drain.js';
export { withHookrun, type HookrunNextConfigFields, type WithHookrunOptions } from './with-hookrun.js';
