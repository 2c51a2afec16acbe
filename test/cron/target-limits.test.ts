import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { withHttpTargets } from '../../src/cron/http-target.js';
import { ConfigError } from '../../src/errors.js';
import type { CronEntry } from '../../src/config/platform-entries.js';
import { testConfig } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { allRuns, createHarness, jobsOf } from './support.js';

/** A target that holds `/slow` calls until `release()` (then answers each after 100 ms) and answers anything else at once; it counts the calls it holds at the same time. */
interface Target {
  url: string;
  calls: number;
  inFlight: number;
  maxInFlight: number;
  release(): void;
  close(): Promise<void>;
}

async function startTarget(): Promise<Target> {
  const state = { calls: 0, inFlight: 0, maxInFlight: 0 };
  let held: Array<() => void> | undefined = [];
  const server: Server = createServer((req, res) => {
    state.calls += 1;
    state.inFlight += 1;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    const answer = () => {
      state.inFlight -= 1;
      res.writeHead(204).end();
    };
    if (req.url !== '/slow') answer();
    else if (held) held.push(answer);
    else setTimeout(answer, 100);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    release: () => {
      for (const answer of held ?? []) setTimeout(answer, 100);
      held = undefined;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

/** The crons as start-up reads them from a platform.json. */
function cronsFrom(crons: unknown[]): CronEntry[] {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-limits-'));
  try {
    writeFileSync(join(dir, 'platform.json'), JSON.stringify({ crons }));
    return testConfig({ PLATFORM_CONFIG: join(dir, 'platform.json') }).crons;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A schedule whose next tick is months away: these tests run the targets by hand. */
const LATER = '0 0 1 7 *';
const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);

describe.each(databaseKinds())('HTTP target concurrency and rate limit, across instances, on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  let target: Target;
  beforeEach(async () => {
    target = await startTarget();
  });
  afterEach(() => target.close());

  it.each([1, 2])(
    'concurrency %i: Run now ×3 on a slow target (two instances) runs at most that many at once; the rest wait and run after, none lost',
    async (n) => {
      const clock = new ManualClock(T0);
      const crons = cronsFrom([{ name: 'slow', url: `${target.url}/slow`, schedule: LATER, concurrency: n }]);
      const [a, b] = await Promise.all([0, 1].map(() => createHarness(testDb.db, { clock, jobs: jobsOf({}), crons })));
      onTestFinished(() => Promise.all([a!.cron.stop(), b!.cron.stop()]).then(() => undefined));
      await Promise.all([a!.cron.tick(), b!.cron.tick()]); // the schedulers are up: a run's end starts the one waiting
      const results = Promise.all([a!, b!, a!].map((h) => h.cron.runJob('slow', 'http')));
      const statuses = async () => (await allRuns(testDb.db)).map((r) => r.status).sort();
      const expected = [...Array<string>(n).fill('running'), ...Array<string>(3 - n).fill('pending')].sort();
      await expect.poll(statuses, { timeout: 5000 }).toEqual(expected); // every claim made, the target holding the calls
      await expect.poll(() => target.inFlight, { timeout: 5000 }).toBe(n);
      target.release();
      const answered = await results;
      expect(answered.filter((r) => r.status === 'queued')).toHaveLength(3 - n);
      for (const queued of answered.filter((r) => r.status === 'queued'))
        expect(queued.waiting).toMatch(new RegExp(`of at most ${n} running \\(concurrency\\)`));
      await expect.poll(async () => (await allRuns(testDb.db)).map((r) => r.status), { timeout: 5000 }).toEqual(['succeeded', 'succeeded', 'succeeded']);
      await Promise.all([a!.cron.idle(5000), b!.cron.idle(5000)]);
      expect(target.calls).toBe(3);
      expect(target.maxInFlight).toBe(n);
    },
  );

  it("rateLimit 2 per '1s': Run now ×4 (two instances) start at least 500 ms apart by the runner's clock, each at its slot, none lost", async () => {
    const clock = new ManualClock(T0);
    const crons = cronsFrom([{ name: 'paced', url: `${target.url}/fast`, schedule: LATER, rateLimit: { limit: 2, period: '1s' }, overlap: 'allow' }]);
    const [a, b] = await Promise.all([0, 1].map(() => createHarness(testDb.db, { clock, jobs: jobsOf({}), crons })));
    onTestFinished(() => Promise.all([a!.cron.stop(), b!.cron.stop()]).then(() => undefined));
    const answered = await Promise.all([a!, b!, a!, b!].map((h) => h.cron.runJob('paced', 'http')));
    expect(answered.map((r) => r.status).sort()).toEqual(['queued', 'queued', 'queued', 'succeeded']);
    expect(answered.find((r) => r.status === 'queued')?.waiting).toMatch(/^rate limit \(2 per 1000 ms\): it starts at .+ at the earliest$/);
    const pending = (await allRuns(testDb.db)).filter((r) => r.status === 'pending');
    expect(pending.map((r) => r.dueAt!.getTime() - T0).sort((x, y) => x - y)).toEqual([500, 1000, 1500]);
    for (let ms = T0 + 100; ms <= T0 + 2000; ms += 100) {
      clock.set(ms);
      await Promise.all([a!.cron.runDue('paced'), b!.cron.runDue('paced')]);
    }
    await Promise.all([a!.cron.idle(5000), b!.cron.idle(5000)]);
    const runs = await allRuns(testDb.db);
    expect(runs.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    const starts = runs.map((r) => r.startedAt.getTime()).sort((x, y) => x - y);
    expect(starts.map((ms) => ms - T0)).toEqual([0, 500, 1000, 1500]);
    for (let i = 1; i < starts.length; i += 1) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(500);
    expect(target.calls).toBe(4);
  });

  it('a rate-held run waits for its slot however the runs come: a retry due later does not push a Run now back', async () => {
    const clock = new ManualClock(T0);
    const crons = cronsFrom([{ name: 'paced', url: `${target.url}/fast`, schedule: LATER, rateLimit: { limit: 1, period: '1m' }, concurrency: 1 }]);
    const h = await createHarness(testDb.db, { clock, jobs: jobsOf({}), crons });
    onTestFinished(() => h.cron.stop());
    expect((await h.cron.runJob('paced', 'http')).status).toBe('succeeded');
    await testDb.db.query(
      `INSERT INTO hookrun.cron_runs (job, trigger, scheduled_for, attempt, started_at, due_at, status) VALUES ('paced', 'schedule', $1, 2, $2, $2, 'pending')`,
      [new Date(T0 - 3_600_000), new Date(T0 + 10 * 60_000)],
    );
    clock.set(T0 + 1000);
    const second = await h.cron.runJob('paced', 'http');
    expect(second).toMatchObject({ status: 'queued' });
    const waiting = (await allRuns(testDb.db)).find((r) => r.id === second.id)!;
    expect(waiting.dueAt!.getTime() - T0).toBe(60_000);
    clock.set(T0 + 59_999);
    expect(await h.cron.runDue('paced')).toBe(0);
    clock.set(T0 + 60_000);
    expect(await h.cron.runDue('paced')).toBe(1);
    await h.cron.idle(5000);
    expect((await allRuns(testDb.db)).find((r) => r.id === second.id)).toMatchObject({ status: 'succeeded', startedAt: new Date(T0 + 60_000) });
  });
});

describe('HTTP target limits: what platform.json may not say', () => {
  const config = (crons: unknown[]) => ({ ...testConfig({ PORT: '3002' }), crons: cronsFrom(crons) });
  const target = (extra: Record<string, unknown>) => ({ name: 'billing-sync', url: 'https://billing.example.com/sync', schedule: '* * * * *', ...extra });
  const refused = (extra: Record<string, unknown>) => () => withHttpTargets(new Map(), config([target(extra)]));

  it('a bad concurrency or rateLimit stops start-up naming the entry, the target, the setting and the fix', () => {
    expect(refused({ concurrency: 0 })).toThrow(ConfigError);
    expect(refused({ concurrency: 0 })).toThrow(
      'platform.json crons[0].concurrency (target "billing-sync"): 0 is not a whole number from 1 to 100; write e.g. "concurrency": 2 for at most 2 runs of it at once, or remove it.',
    );
    expect(refused({ concurrency: 1.5 })).toThrow(/1\.5 is not a whole number/);
    expect(refused({ concurrency: '2' })).toThrow(/concurrency \(target "billing-sync"\): "2" is not a whole number/);
    expect(refused({ concurrency: 2, overlap: 'skip' })).toThrow(
      /sets "overlap" too; with "concurrency" a run over the limit waits its turn, so remove "overlap"/,
    );
    expect(refused({ rateLimit: 10 })).toThrow(
      /crons\[0\]\.rateLimit \(target "billing-sync"\): must be an object with "limit" and "period" only, like \{ "limit": 10, "period": "1m" \}/,
    );
    expect(refused({ rateLimit: { limit: 2, period: '1s', key: 'x' } })).toThrow(/"limit" and "period" only/);
    expect(refused({ rateLimit: { limit: 2, period: 'fast' } })).toThrow(
      `platform.json crons[0]: rateLimit.period "fast" is not a duration: write milliseconds (a number) or a number and a unit, like '500ms', '30s', '5m', '1h', '1d' or '1w'.`,
    );
    expect(refused({ rateLimit: { limit: 0, period: '1s' } })).toThrow(/rateLimit\.limit \(target "billing-sync"\): 0 is not a whole number from 1 to 1000/);
    expect(refused({ rateLimit: { period: '1s' } })).toThrow(/rateLimit\.limit .*: undefined is not a whole number/);
    const ok = withHttpTargets(new Map(), config([target({ concurrency: 3, rateLimit: { limit: 10, period: '1m' } })])).get('billing-sync');
    expect(ok?.limits).toEqual({ concurrency: 3, rate: { limit: 10, periodMs: 60_000 } });
  });

  it('concurrency and rateLimit belong to HTTP targets only', () => {
    expect(() => config([{ path: '/cron/keep-alive', schedule: '* * * * *', concurrency: 2 }])).toThrow(
      /crons\[0\]\.concurrency: only an HTTP target \("name" and "url"\) has one/,
    );
    expect(() => config([{ path: '/cron/keep-alive', schedule: '* * * * *', rateLimit: { limit: 1, period: '1s' } }])).toThrow(
      /crons\[0\]\.rateLimit: only an HTTP target/,
    );
  });
});
