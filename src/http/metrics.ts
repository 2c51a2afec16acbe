import { Hono } from 'hono';
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
  /** METRICS_TOKEN: when set, a scrape must send `Authorization: Bearer <it>`. */
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

/**
 * `GET /metrics` in the Prometheus text format, behind `METRICS_TOKEN` when it
 * is set, rendered at most once a second. The pending/dead gauges are
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
    if (deps.token !== undefined && !secureEqual(bearerToken(c.req.header('authorization')), deps.token)) {
      throw new AppError(
        'unauthorized',
        'Send Authorization: Bearer <METRICS_TOKEN> (in Prometheus: authorization { credentials: … }); the token is missing or wrong.',
      );
    }
    const text = rendered && deps.now() - rendered.at < METRICS_RENDER_MS ? rendered.text : await render();
    return c.body(text, 200, { 'content-type': deps.metrics.registry.contentType, 'cache-control': 'no-store' });
  });
  return app;
}
