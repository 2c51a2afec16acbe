import { isIP } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono, type Context } from 'hono';
import { AppError } from '../errors.js';
import { bearerToken, secureEqual } from '../secure-compare.js';
import type { CronRunResult } from './runner-deps.js';
import { unknownJobMessage, type JobRegistry } from './registry.js';

/** What the `/cron` sub-app needs. */
export interface CronRoutesOptions {
  jobs: JobRegistry;
  run(job: string): Promise<CronRunResult>;
  /**
   * Run the job for the tick a scheduled delivery belongs to; `duplicate` when
   * that tick already has its run (Vercel Cron may deliver a tick twice).
   */
  runScheduled(job: string, delivered: ScheduledDelivery): Promise<CronRunResult | 'duplicate'>;
  /** Set → a `Bearer` token is required; unset → closed, unless `localCallers`. */
  cronSecret: string | undefined;
  /** Set (CRON_SECRET is unusable) → every call answers 503 `not_configured` with this message, whoever calls. */
  cronSecretProblem?: string;
  /** Without CRON_SECRET, serve loopback callers that came through no proxy (`CRON_LOCAL_CALLERS=allow`, or `hookrun dev`). */
  localCallers: boolean;
  /** The caller's IP; defaults to the socket's (none under `app.request()` → not loopback). */
  remoteAddress?: (c: Context) => string | undefined;
}

/** The caller's IP from its Node socket; undefined under `app.request()` (tests) and other runtimes. */
export function socketAddress(c: Context): string | undefined {
  try {
    return getConnInfo(c).remote.address;
  } catch {
    return undefined; // no Node socket (app.request() in tests, other runtimes): not loopback
  }
}

const LOOPBACK_NAMES = /^(localhost|.+\.localhost|127(\.\d{1,3}){3}|\[?::1\]?)$/i;

/**
 * A loopback caller that is really a browser: a page on any site can send a
 * request to 127.0.0.1 (cross-site request), or make its own host name
 * resolve there (DNS rebinding). Browsers mark both: `Origin` and
 * `Sec-Fetch-Site` on the request, the foreign name in `Host`. A command-line
 * caller sends neither and names a loopback host.
 */
function fromBrowserPage(c: Context): boolean {
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined && site !== 'none') return true;
  if (c.req.header('origin') !== undefined) return true;
  return !LOOPBACK_NAMES.test(new URL(c.req.url).hostname);
}

/** 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const plain = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  if (isIP(plain) === 4) return plain.startsWith('127.');
  return plain === '::1' || plain === '0:0:0:0:0:0:0:1';
}

const PROXY_HEADERS = ['forwarded', 'via', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-port', 'x-real-ip'];

/**
 * A request a proxy passed on: a reverse proxy on this machine connects from
 * loopback on behalf of anyone, and nginx's default rewrites `Host` to the
 * upstream's, so neither the address nor the name shows who is really asking.
 * The proxy's own headers do (any `X-Forwarded-*`, `Forwarded`, `Via`).
 */
function throughProxy(c: Context): boolean {
  return Object.keys(c.req.header()).some((name) => PROXY_HEADERS.includes(name) || name.startsWith('x-forwarded-'));
}

/** Vercel Cron's `User-Agent` (`vercel-cron/1.0`): the request is a scheduled delivery of a tick. */
export const SCHEDULED_DELIVERY_AGENT = /^vercel-cron\//i;

/** The header Vercel sends with a scheduled delivery: the cron expression that fired. */
export const SCHEDULE_HEADER = 'x-vercel-cron-schedule';

/** What a scheduled delivery says of itself: the expression that fired, when the sender names it. */
export interface ScheduledDelivery {
  expression?: string;
}

/** The 403 without CRON_SECRET when the operator has not said that no proxy is in front. */
const CLOSED_WITHOUT_SECRET =
  'CRON_SECRET is not set, so /cron routes are closed: a reverse proxy on this machine (nginx, Caddy) connects from loopback on behalf of anyone, so a local address proves nothing. Set CRON_SECRET (16+ characters) and send Authorization: Bearer <CRON_SECRET>; or, only if no proxy is in front of hookrun, set CRON_LOCAL_CALLERS=allow to let callers on this machine in without it.';

/** Why a request is not a command-line caller's on this machine: another machine's, a proxy's, a web page's. */
export type NotLocal = 'remote' | 'proxy' | 'browser';

/**
 * The one rule for a route that, without its secret, answers only callers on
 * this machine (`/cron` under `CRON_LOCAL_CALLERS=allow`, `/metrics` without
 * METRICS_TOKEN): a loopback socket, no proxy's headers (a same-host proxy
 * relays anyone), not a web page (cross-site request, DNS rebinding). Returns
 * why not, or undefined for such a caller.
 */
export function notLocalCaller(c: Context, address: string | undefined): NotLocal | undefined {
  if (!isLoopbackAddress(address)) return 'remote';
  if (throughProxy(c)) return 'proxy';
  if (fromBrowserPage(c)) return 'browser';
  return undefined;
}

/** The 403 of a /cron call without CRON_SECRET from a caller that is not local, by why. */
const NOT_LOCAL_CRON_CALLER: Record<NotLocal, string> = {
  remote: 'CRON_SECRET is not set, so /cron routes answer only callers on this machine. Set CRON_SECRET and send Authorization: Bearer <CRON_SECRET>.',
  proxy:
    'CRON_SECRET is not set, so /cron routes answer only callers on this machine, and this request came through a proxy (Forwarded, X-Forwarded-*, Via), which could be relaying anyone. Set CRON_SECRET (16+ characters) and send Authorization: Bearer <CRON_SECRET>.',
  browser:
    'CRON_SECRET is not set, so /cron routes refuse requests a web page sends (Origin, Sec-Fetch-Site) or that name another host (DNS rebinding). Call it with curl, or set CRON_SECRET.',
};

/**
 * `POST` and `GET /cron/<job>` (GET is what Vercel Cron sends): run the job
 * once, answer `200 OK` as text. Unknown job 404 (naming the jobs only to
 * a CRON_SECRET holder), running 409, failed 500 `Job failed (run <id>); …`
 * as text, without the job's error (answers schedulers rely on: see
 * docs/design.md; the error is in the run history). With CRON_SECRET set a
 * `Bearer` token is required; without it the routes are closed, unless
 * `localCallers` (no proxy in front): then loopback callers that did not come
 * through a proxy, and not from a web page, get in.
 * A scheduled delivery (`User-Agent: vercel-cron/…`, or an
 * `x-vercel-cron-schedule` header) runs at most once per tick; a repeat
 * answers `200 OK` without running the job again.
 */
export function createCronRoutes(options: CronRoutesOptions): Hono {
  const app = new Hono();
  const remoteAddress = options.remoteAddress ?? socketAddress;

  app.use('*', async (c, next) => {
    if (options.cronSecretProblem !== undefined) throw new AppError('not_configured', options.cronSecretProblem);
    if (options.cronSecret !== undefined) {
      if (!secureEqual(bearerToken(c.req.header('authorization')), options.cronSecret)) {
        throw new AppError('unauthorized', 'Send Authorization: Bearer <CRON_SECRET>; the token is missing or wrong.');
      }
    } else if (!options.localCallers) {
      throw new AppError('forbidden', CLOSED_WITHOUT_SECRET);
    } else {
      const why = notLocalCaller(c, remoteAddress(c));
      if (why !== undefined) throw new AppError('forbidden', NOT_LOCAL_CRON_CALLER[why]);
    }
    await next();
  });

  app.on(['GET', 'POST'], '/:job', async (c) => {
    // Hono serves HEAD through GET handlers; a HEAD must not run a job.
    if (c.req.method === 'HEAD') throw new AppError('method_not_allowed', 'Use POST (or GET) to run a cron job.');
    const job = c.req.param('job');
    if (!options.jobs.has(job)) {
      // Job names are for a caller who proved it holds CRON_SECRET; a loopback caller without one may be anyone on the machine.
      if (options.cronSecret !== undefined) throw new AppError('not_found', unknownJobMessage(job, options.jobs));
      throw new AppError('not_found', `No cron job "${job}". List the jobs with hookrun cron list; a job is a file jobs/<name>.ts in your project.`);
    }
    const expression = c.req.header(SCHEDULE_HEADER)?.trim() || undefined;
    const scheduled = expression !== undefined || SCHEDULED_DELIVERY_AGENT.test(c.req.header('user-agent') ?? '');
    const result = scheduled ? await options.runScheduled(job, { expression }) : await options.run(job);
    if (result === 'duplicate') return c.text('OK', 200, { 'X-Hookrun-Run': 'duplicate' });
    if (result.status === 'skipped') {
      const reason = result.error?.startsWith('paused') ? `${result.error}` : `it is ${result.error ?? 'already running'}`;
      throw new AppError('conflict', `Job "${job}" was not run: ${reason}; this call was recorded as skipped (run ${result.id}).`);
    }
    if (result.status === 'queued') return c.text(`Queued: ${result.waiting ?? 'the job is running; this run starts when it ends'} (run ${result.id}).`, 202);
    // The error text may name internals (hosts, queries, paths): it stays in the run history and the log.
    if (result.status === 'failed')
      return c.text(`Job failed (run ${result.id}); see its error with hookrun cron runs ${job}, in the dashboard's jobs page, or in the server log.`, 500);
    return c.text('OK', 200);
  });

  app.all('/:job', () => {
    throw new AppError('method_not_allowed', 'Use POST (or GET) to run a cron job.');
  });
  return app;
}
