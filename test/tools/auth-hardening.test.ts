import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CaptureStatus } from '../../src/changes/capture.js';
import { ManualClock } from '../../src/clock.js';
import type { Config } from '../../src/config/config.js';
import { createCronService } from '../../src/cron/cron-service.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { buildApp } from '../../src/http/build-app.js';
import { MAX_FAILURE_LOG_LINES } from '../../src/http/auth-failures.js';
import { FIRST_BLOCK_MS } from '../../src/http/credential-throttle.js';
import { Metrics } from '../../src/metrics.js';
import { buildSample } from '../../src/webhooks/samples.js';
import { SECRETS, testConfig } from '../helpers/config.js';
import { createPgliteDatabase, type TestDatabase } from '../helpers/db.js';
import { TEST_JOBS } from './tools-app.js';

const METRICS_TOKEN = 'metrics-token-for-tests-32-characters';
const WRONG = 'wrong-bearer-guess-';

describe('authenticated routes: throttled, logged failures; /ready and /metrics cheap and quiet', () => {
  let testDb: TestDatabase;
  beforeAll(async () => {
    testDb = await createPgliteDatabase();
  });
  afterAll(async () => testDb?.close());

  /** The whole app as service.ts builds it, with a log whose lines the test reads. */
  async function appWith(env: Record<string, string> = {}, changes?: () => CaptureStatus) {
    const lines: string[] = [];
    const log = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
    const config: Config = { ...testConfig({ METRICS_TOKEN, ...env }), crons: [{ path: '/cron/tick', schedule: '0 1 * * *' }] };
    const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
    const metrics = new Metrics();
    const cron = await createCronService({ config, db: testDb.db, log, metrics, clock, jobs: TEST_JOBS });
    const { app } = buildApp({ config, db: testDb.db, clock, log, metrics, writer: new EventWriter(testDb.db), cron, changes: changes && { status: changes } });
    return { app, clock, metrics, lines };
  }

  const databaseBody = JSON.stringify(buildSample('database', 'INSERT'));
  it.each([
    { route: '/api/events', method: 'GET', right: SECRETS.admin },
    { route: '/cron/tick', method: 'POST', right: SECRETS.cron },
    { route: '/metrics', method: 'GET', right: METRICS_TOKEN },
    { route: '/webhooks/database', method: 'POST', right: SECRETS.database, body: databaseBody },
  ])(
    '$route without an address (as inside a Next.js route): checked first; 10 wrong bearers are 401, the next 290 are 429 with Retry-After; the right bearer still works; the log is bounded, without the bearers',
    async ({ route, method, right, body }) => {
      const { app, clock, lines } = await appWith();
      const send = (token: string) => app.request(route, { method, body, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
      const statuses: number[] = [];
      let last: Response | undefined;
      for (let i = 0; i < 300; i++) {
        last = await send(`${WRONG}${i}`);
        statuses.push(last.status);
      }
      expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
      expect(statuses.slice(10)).toEqual(Array(290).fill(429));
      expect(Number(last!.headers.get('retry-after'))).toBe(60);
      const { error } = (await last!.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('too_many_requests');
      expect(error.message).toMatch(/retry in 60 s/);
      expect((await send(right)).status).toBe(200); // without an address every caller is one: never locked out
      const failures = () => lines.filter((line) => line.includes('authentication failed'));
      expect(failures().length).toBe(MAX_FAILURE_LOG_LINES);
      expect(lines.join('\n')).not.toContain(WRONG);
      clock.advance(FIRST_BLOCK_MS);
      expect((await send('wrong-again')).status).toBe(401);
      expect(failures().at(-1)).toMatch(/"suppressed":2\d\d/); // the lines left out are counted on the next one
    },
  );

  it('/metrics with METRICS_TOKEN set: 401 without it; concurrent scrapes share one render, and it serves for a second', async () => {
    const { app, clock, metrics } = await appWith();
    const refused = await app.request('/metrics');
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('METRICS_TOKEN');
    const render = vi.spyOn(metrics.registry, 'metrics');
    const scrape = () => app.request('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    const answers = await Promise.all(Array.from({ length: 50 }, scrape));
    expect(answers.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(await answers[0]!.text()).toContain('hookrun_events_received_total');
    expect((await scrape()).status).toBe(200);
    expect(render).toHaveBeenCalledTimes(1);
    clock.advance(1000);
    await scrape();
    expect(render).toHaveBeenCalledTimes(2);
  });

  it('/ready writes nothing: no transaction id is taken however many times it is called', async () => {
    const { app } = await appWith();
    const xid = async () => Number((await testDb.db.query<{ x: string }>('SELECT txid_current()::text AS x'))[0]!.x);
    const before = await xid();
    for (let i = 0; i < 20; i++) expect((await app.request('/ready')).status).toBe(200);
    expect(await xid()).toBe(before + 1); // only the second txid_current() itself; a probe insert took one per call
  });

  it("/ready shows the change capture's failure as a code, never its message; GET /api/changes (admin) has the message", async () => {
    const secret = 'could not connect to shop-db.internal:5432 as role replicator';
    const status: CaptureStatus = {
      state: 'disconnected',
      slot: 'hookrun_changes',
      publication: 'hookrun_changes',
      lagBytes: null,
      lagSeconds: null,
      retainedWalBytes: null,
      changesPerSecond: 0,
      lastError: secret,
      lastErrorCode: 'source_unreachable',
    };
    const { app } = await appWith({}, () => status);
    const ready = await app.request('/ready');
    expect(ready.status).toBe(200);
    const text = await ready.text();
    expect(text).not.toContain('shop-db');
    expect(text).not.toContain('replicator');
    expect(JSON.parse(text).changes).toMatchObject({ state: 'disconnected', last_error_code: 'source_unreachable' });
    expect((await app.request('/api/changes')).status).toBe(401);
    const admin = await app.request('/api/changes', { headers: { authorization: `Bearer ${SECRETS.admin}` } });
    expect(((await admin.json()) as { changes: CaptureStatus }).changes.lastError).toBe(secret);
  });
});
