import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { openDatabase } from '../../src/db/client.js';
import type { Database } from '../../src/db/database.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { allRuns, createHarness, deferred, faultyDatabase, jobsOf, type CronHarness } from './support.js';

const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const iso = (d: Date | null) => d?.toISOString() ?? null;

describe.each(databaseKinds())('scheduler on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  it('three instances ticking over many simulated minutes run each tick exactly once', async () => {
    // PostgreSQL: three separate connection pools, like three processes. PGlite is one session by nature.
    const extra: Database[] = [];
    const dbs: Database[] = [testDb.db];
    for (let i = 1; i < 3; i++) {
      if (testDb.url) {
        const db = await openDatabase({ databaseUrl: testDb.url, poolSize: 3 });
        extra.push(db);
        dbs.push(db);
      } else dbs.push(testDb.db);
    }
    try {
      const executions: string[] = [];
      const jobs = jobsOf({
        tick: {
          run: async ({ scheduledFor }) => {
            executions.push(iso(scheduledFor)!);
          },
        },
      });
      const crons = [{ path: '/cron/tick', schedule: '* * * * *' }];
      const instances: CronHarness[] = [];
      for (const db of dbs) instances.push(await createHarness(db, { jobs, crons, clock: new ManualClock(T0 + 500) }));
      await Promise.all(instances.map((h) => h.cron.tick())); // first pass: learn the cursor

      const TICKS = 40;
      for (let minute = 1; minute <= TICKS; minute++) {
        // Each instance sees the tick a little late, by its own amount; one sometimes misses a pass.
        instances.forEach((h, i) => h.clock.set(T0 + minute * MINUTE + ((minute * 37 + i * 211) % 900)));
        const ticking = minute % 7 === 0 ? instances.slice(0, 2) : instances;
        const outcomes = (await Promise.all(ticking.map((h) => h.cron.tick()))).flat();
        expect(outcomes.filter((o) => o.kind === 'error')).toEqual([]);
        await Promise.all(instances.map((h) => h.cron.idle(5000)));
      }

      const expected = Array.from({ length: TICKS }, (_, i) => new Date(T0 + (i + 1) * MINUTE).toISOString());
      expect(executions.sort()).toEqual(expected);
      const runs = await allRuns(testDb.db);
      expect(runs).toHaveLength(TICKS);
      expect(runs.every((r) => r.status === 'succeeded' && r.trigger === 'schedule' && r.durationMs !== null)).toBe(true);
      expect(runs.map((r) => iso(r.scheduledFor)).sort()).toEqual(expected);
      // Each run's lag is observed by the instance that ran it, whichever that was: over all of them, once per tick.
      const lagCounts = await Promise.all(
        instances.map(async (h) => {
          const text = await h.metrics.registry.getSingleMetricAsString('hookrun_cron_lag_seconds');
          return Number(/hookrun_cron_lag_seconds_count\{job="tick"\} (\d+)/.exec(text)?.[1] ?? 0);
        }),
      );
      expect(lagCounts.reduce((sum, n) => sum + n, 0)).toBe(TICKS);
    } finally {
      for (const db of extra) await db.close();
    }
  });

  it('a tick while the job still runs is recorded skipped', async () => {
    const gate = deferred();
    const h = await createHarness(testDb.db, {
      jobs: jobsOf({ slow: { run: () => gate.promise } }),
      crons: [{ path: '/cron/slow', schedule: '* * * * *' }],
      clock: new ManualClock(T0 + 1000),
    });
    await h.cron.tick();
    h.clock.set(T0 + MINUTE + 100);
    expect((await h.cron.tick()).map((o) => o.kind)).toEqual(['started']);
    h.clock.set(T0 + 2 * MINUTE + 100);
    expect((await h.cron.tick()).map((o) => o.kind)).toEqual(['skipped']);
    gate.resolve();
    await h.cron.idle(5000);
    h.clock.set(T0 + 3 * MINUTE + 100);
    expect((await h.cron.tick()).map((o) => o.kind)).toEqual(['started']);
    await h.cron.idle(5000);
    const runs = await allRuns(testDb.db);
    expect(runs.map((r) => `${r.scheduledFor!.getUTCMinutes()}:${r.status}`)).toEqual(['1:succeeded', '2:skipped', '3:succeeded']);
    expect(await h.metrics.registry.getSingleMetricAsString('hookrun_cron_runs_total')).toContain(
      'hookrun_cron_runs_total{job="slow",trigger="schedule",status="skipped"} 1',
    );
  });

  it("after downtime, catch-up 'latest' runs only the latest missed tick, once", async () => {
    const ran: string[] = [];
    const jobs = jobsOf({ hourly: { run: ({ scheduledFor }) => void ran.push(iso(scheduledFor)!) } });
    const crons = [{ path: '/cron/hourly', schedule: '0 * * * *' }];
    const before = await createHarness(testDb.db, { jobs, crons, clock: new ManualClock(T0 + 9 * HOUR - 1000) });
    await before.cron.tick();
    before.clock.set(T0 + 9 * HOUR + 200);
    await before.cron.tick();
    await before.cron.stop();

    // Down from 09:00 to 13:30: a fresh instance owes 10:00, 11:00, 12:00, 13:00 and runs 13:00 only.
    const after = await createHarness(testDb.db, { jobs, crons, clock: new ManualClock(T0 + 13 * HOUR + 30 * MINUTE) });
    const outcomes = await after.cron.tick();
    expect(outcomes).toMatchObject([{ kind: 'started', late: true }]);
    await after.cron.idle(5000);
    expect(await after.cron.tick()).toEqual([]);
    after.clock.set(T0 + 14 * HOUR + 50);
    await after.cron.tick();
    await after.cron.idle(5000);
    expect(ran).toEqual(['2026-01-01T09:00:00.000Z', '2026-01-01T13:00:00.000Z', '2026-01-01T14:00:00.000Z']);
  });

  it("catch-up 'none' drops missed ticks and waits for the next one", async () => {
    const ran: string[] = [];
    const jobs = jobsOf({ hourly: { catchUp: 'none', run: ({ scheduledFor }) => void ran.push(iso(scheduledFor)!) } });
    const crons = [{ path: '/cron/hourly', schedule: '0 * * * *' }];
    await testDb.db.query(
      `INSERT INTO hookrun.cron_runs (job, trigger, scheduled_for, started_at, finished_at, status, duration_ms) VALUES ('hourly', 'schedule', $1, $1, $1, 'succeeded', 1)`,
      [new Date(T0 + 9 * HOUR)],
    );
    const h = await createHarness(testDb.db, { jobs, crons, clock: new ManualClock(T0 + 13 * HOUR + 30 * MINUTE) });
    expect(await h.cron.tick()).toMatchObject([{ kind: 'missed', scheduledFor: new Date(T0 + 13 * HOUR) }]);
    h.clock.set(T0 + 14 * HOUR + 10);
    expect(await h.cron.tick()).toMatchObject([{ kind: 'started', late: false }]);
    await h.cron.idle(5000);
    expect(ran).toEqual(['2026-01-01T14:00:00.000Z']);
    expect(await allRuns(testDb.db)).toHaveLength(2);
  });

  it('a clock jump inside one running instance also runs just the latest tick', async () => {
    const ran: string[] = [];
    const h = await createHarness(testDb.db, {
      jobs: jobsOf({ often: { run: ({ scheduledFor }) => void ran.push(iso(scheduledFor)!) } }),
      crons: [{ path: '/cron/often', schedule: '*/5 * * * *' }],
      clock: new ManualClock(T0 + 1000),
    });
    await h.cron.tick();
    h.clock.set(T0 + 3 * HOUR + 2 * MINUTE);
    await h.cron.tick();
    await h.cron.idle(5000);
    expect(ran).toEqual(['2026-01-01T03:00:00.000Z']);
  });

  it('backs off without throwing while the database is down, then runs the owed tick', async () => {
    const faulty = faultyDatabase(testDb.db);
    const ran: string[] = [];
    const h = await createHarness(faulty, {
      jobs: jobsOf({ often: { run: ({ scheduledFor }) => void ran.push(iso(scheduledFor)!) } }),
      crons: [{ path: '/cron/often', schedule: '* * * * *' }],
      clock: new ManualClock(T0 + 1000),
    });
    await h.cron.tick();
    faulty.down = true;
    for (let i = 0; i < 3; i++) {
      h.clock.set(T0 + MINUTE + i * 1000);
      expect(await h.cron.tick()).toMatchObject([{ kind: 'error', error: expect.stringContaining('database is unavailable') }]);
    }
    faulty.down = false;
    h.clock.set(T0 + MINUTE + 5000);
    expect(await h.cron.tick()).toMatchObject([{ kind: 'started', scheduledFor: new Date(T0 + MINUTE) }]);
    await h.cron.idle(5000);
    expect(ran).toEqual(['2026-01-01T00:01:00.000Z']);
  });

  it('startScheduler ticks on its own timer and stop() ends it', async () => {
    const ran: string[] = [];
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 30));
    const h = await createHarness(testDb.db, {
      jobs: jobsOf({ often: { run: ({ scheduledFor }) => void ran.push(iso(scheduledFor)!) } }),
      crons: [{ path: '/cron/often', schedule: '* * * * *' }],
      clock,
    });
    h.cron.startScheduler();
    const deadline = Date.now() + 10_000;
    // Move the fake clock past the tick; the real timer (1 s) picks it up.
    setTimeout(() => clock.set(Date.UTC(2026, 0, 1, 0, 1, 1)), 50);
    while (ran.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await h.cron.stop();
    expect(ran).toEqual(['2026-01-01T00:01:00.000Z']);
  });

  it('startScheduler refuses a broken platform.json with a ConfigError', async () => {
    const h = await createHarness(testDb.db, { jobs: jobsOf({ a: { run() {} } }), crons: [{ path: '/cron/a', schedule: '61 * * * *' }] });
    expect(() => h.cron.startScheduler()).toThrow('crons[0].schedule "61 * * * *": minute must be 0-59');
    expect(() => h.cron.validate()).toThrow('minute must be 0-59');
  });
});
