import { Hono, type Context } from 'hono';
import { notLocalCaller, socketAddress, type NotLocal } from '../cron/routes.js';
import { EVENT_STATUSES } from '../db/events.js';
import { withDeadline } from '../deadline.js';
import { AppError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { bearerToken, secureEqual } from '../secure-compare.js';

/** What the metrics route needs: the registry, and a cheap count of inbox rows by status. */
export interface MetricsRouteDeps {
  metrics: Metrics;
  countEventsByStatus: () => Promise<Record<string, number>>;
  /** On-disk bytes of the tables retention bounds (the inbox's size; its growth is the rate of this). */
  tableBytes?: () => Promise<Record<string, number>>;
  log: Logger;
  /** Give up sampling the database after this long and serve the rest (a scrape must not hang). */
  sampleTimeoutMs: number;
  /** The clock that ages a sample (injected: tests move time). */
  now: () => number;
  /** METRICS_TOKEN: when set, a scrape must send `Authorization: Bearer <it>`; unset, only a caller on this machine is served. */
  token?: string;
}

/**
 * A sample of the counts serves every scrape for this long. `count(*) … GROUP
 * BY status` over a large inbox is not free: 50 parallel scrapes of 1M rows
 * made real webhooks answer 503 (security review). Prometheus scrapes every
 * 15 s or so, so a 5 s old count costs nothing in accuracy.
 */
export const METRICS_SAMPLE_MS = 5000;

/**
 * The rendered text serves every scrape for this long, and scrapes that
 * arrive while it renders wait for that one render: a flood of scrapes costs
 * one render a second, not one each.
 */
export const METRICS_RENDER_MS = 1000;

/** Why a scrape without METRICS_TOKEN is refused, as its 403 says it. */
const NOT_LOCAL_SCRAPER: Record<NotLocal, string> = {
  remote: 'this request comes from another machine',
  proxy: 'this request came through a proxy (Forwarded, X-Forwarded-*, Via), which could be relaying anyone',
  browser: 'this request was sent by a web page (Origin, Sec-Fetch-Site) or names another host (DNS rebinding)',
};

/**
 * Who may scrape. The metrics name every job and handler and count the
 * inbox's volumes, so without METRICS_TOKEN only a caller on this machine is
 * served, by the rule `/cron` keeps: a loopback socket, no proxy's headers
 * (a same-host proxy relays anyone), not a web page (cross-site request, DNS
 * rebinding). Under `hookrun/next` there is no socket, so the token is needed.
 */
function checkScraper(c: Context, token: string | undefined): void {
  if (token !== undefined) {
    if (secureEqual(bearerToken(c.req.header('authorization')), token)) return;
    throw new AppError(
      'unauthorized',
      'Send Authorization: Bearer <METRICS_TOKEN> (in Prometheus: authorization { credentials: … }); the token is missing or wrong.',
    );
  }
  const why = notLocalCaller(c, socketAddress(c));
  if (why === undefined) return;
  throw new AppError(
    'forbidden',
    `METRICS_TOKEN is not set, so /metrics answers only callers on this machine, and ${NOT_LOCAL_SCRAPER[why]}. Set METRICS_TOKEN (32+ characters) and scrape with Authorization: Bearer <METRICS_TOKEN> (in Prometheus: authorization { credentials: … }).`,
  );
}

/**
 * `GET /metrics` in the Prometheus text format, behind `METRICS_TOKEN` (or,
 * unset, for callers on this machine only: `checkScraper`), rendered at most once a second. The pending/dead gauges are
 * sampled from the database at scrape time (at most every 5 s, one query at a
 * time), so every instance reports the
 * shared inbox and nothing has to keep them in step; a failed sample keeps
 * the last values and is logged, the rest of the scrape still answers.
 */
export function createMetricsRoute(deps: MetricsRouteDeps): Hono {
  const app = new Hono();
  let sampledAt = -Infinity;
  let inFlight: Promise<void> | undefined;
  /** At most one count in flight, at most one per METRICS_SAMPLE_MS, however many scrapes arrive. */
  const sample = () =>
    (inFlight ??= (async () => {
      try {
        const counts = await withDeadline(deps.countEventsByStatus(), deps.sampleTimeoutMs, () => new Error(`no answer within ${deps.sampleTimeoutMs} ms`));
        for (const status of new Set([...EVENT_STATUSES, ...Object.keys(counts)])) deps.metrics.eventsByStatus.set({ status }, counts[status] ?? 0);
        const bytes = deps.tableBytes
          ? await withDeadline(deps.tableBytes(), deps.sampleTimeoutMs, () => new Error(`no answer within ${deps.sampleTimeoutMs} ms`))
          : {};
        for (const [table, value] of Object.entries(bytes)) deps.metrics.tableBytes.set({ table }, value);
      } catch (error) {
        deps.log.warn({ err: { message: (error as Error).message } }, 'metrics: could not count events by status; serving the last values');
      } finally {
        sampledAt = deps.now();
        inFlight = undefined;
      }
    })());
  let rendered: { text: string; at: number } | undefined;
  let rendering: Promise<string> | undefined;
  const render = () =>
    (rendering ??= (async () => {
      try {
        if (deps.now() - sampledAt >= METRICS_SAMPLE_MS || inFlight) await sample();
        const text = await deps.metrics.registry.metrics();
        rendered = { text, at: deps.now() };
        return text;
      } finally {
        rendering = undefined;
      }
    })());
  app.get('/metrics', async (c) => {
    checkScraper(c, deps.token);
    const text = rendered && deps.now() - rendered.at < METRICS_RENDER_MS ? rendered.text : await render();
    return c.body(text, 200, { 'content-type': deps.metrics.registry.contentType, 'cache-control': 'no-store' });
  });
  return app;
}
