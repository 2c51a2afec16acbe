import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createCronService } from '../../src/cron/cron-service.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { MAX_FAILURE_LOG_LINES } from '../../src/http/auth-failures.js';
import { buildApp } from '../../src/http/build-app.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { reportFigures } from '../helpers/figures.js';
import { testConfig } from '../helpers/config.js';
import { createPgliteDatabase } from '../helpers/db.js';
import { recordCapture } from '../helpers/secret-scan.js';
import { TEST_JOBS } from '../tools/tools-app.js';

interface Line {
  level: number;
  msg: string;
  route?: string;
  reason?: string;
  suppressed?: number;
}

/** A pino logger at info (production's level) that keeps its lines, and hands them to the secret scan. */
function keptLogger(label: string) {
  const lines: Line[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => (recordCapture(label, line), void lines.push(JSON.parse(line) as Line)) });
  return { log, lines };
}

/** Lines logged per route and reason in a minute (src/rejection-log.ts). */
const LOGGED_PER_MINUTE = 10;

/** `hookrun_requests_rejected_total` by "route reason", read from the registry as a scrape would. */
async function total(metrics: Metrics): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const counter = metrics.registry.getSingleMetric('hookrun_requests_rejected_total');
  for (const v of (await counter?.get())?.values ?? []) out[`${v.labels.route} ${v.labels.reason}`] = v.value;
  return out;
}

describe('a flood of refused requests', () => {
  it('logs a bounded number of lines and counts every one of them by route and reason', { timeout: 120_000 }, async () => {
    const db = await createPgliteDatabase();
    try {
      const { log, lines } = keptLogger('rejection flood');
      const clock = new ManualClock(Date.now());
      const config = testConfig();
      const metrics = new Metrics();
      const cron = await createCronService({ config, db: db.db, log: silentLogger, metrics, clock, jobs: TEST_JOBS });
      const { app } = buildApp({ config, db: db.db, clock, log, metrics, writer: new EventWriter(db.db), cron });
      const floods: Array<[string, number, () => Request]> = [
        [
          'bad Stripe signatures',
          400,
          () =>
            new Request('http://h/webhooks/payments', {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
              body: '{"id":"evt_x"}',
            }),
        ],
        [
          'no Stripe signature',
          200,
          () => new Request('http://h/webhooks/payments', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }),
        ],
        ['wrong admin token', 200, () => new Request('http://h/api/events', { headers: { authorization: 'Bearer wrong-token-wrong-token' } })],
        ['wrong cron secret', 200, () => new Request('http://h/cron/tick', { method: 'POST', headers: { authorization: 'Bearer nope' } })],
        [
          'wrong dashboard login',
          200,
          () => new Request('http://h/admin/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'token=wrong' }),
        ],
      ];
      const statuses: Record<string, number> = {};
      let sent = 0;
      for (const [, count, make] of floods) {
        for (let i = 0; i < count; i += 50) {
          const answers = await Promise.all(Array.from({ length: Math.min(50, count - i) }, () => app.request(make())));
          for (const res of answers) statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          sent += answers.length;
        }
      }
      const counted = await total(metrics);
      const keys = 6; // (route, reason) pairs this flood makes
      reportFigures('rejection flood', { requests: sent, statuses, logLines: lines.length, counters: counted });
      expect(
        Object.keys(statuses).every((s) => Number(s) >= 400 && Number(s) < 500),
        JSON.stringify(statuses),
      ).toBe(true);
      expect(Object.values(counted).reduce((a, b) => a + b, 0)).toBe(sent);
      expect(counted['/webhooks/payments invalid_signature']).toBe(400);
      expect(counted['/webhooks/payments missing_signature']).toBe(200);
      // One address: its first 10 wrong bearers are checked, then every credential from it is refused unchecked, on every route.
      expect(counted['/api unauthorized']).toBe(10);
      expect(counted['/api too_many_requests']).toBe(190);
      expect(counted['/cron too_many_requests']).toBe(200);
      expect(counted['/admin/login too_many_requests']).toBe(200);
      // Two bounded logs: the refusals' (10 a minute per route and reason) and the credential failures' (auth-failures.ts).
      expect(lines.length, `${lines.length} log lines for ${sent} refusals`).toBeLessThanOrEqual(keys * LOGGED_PER_MINUTE + MAX_FAILURE_LOG_LINES);
    } finally {
      await db.close();
    }
  });
});
