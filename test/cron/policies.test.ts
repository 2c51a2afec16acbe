import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { allRuns, createHarness, deferred, jobsOf } from './support.js';

const at = (hh: number, mm = 0, ss = 0) => Date.UTC(2026, 10, 23, hh, mm, ss);
const iso = (d: Date | number | null) => (d === null ? null : new Date(d).toISOString());
const hourly = (extra: Record<string, unknown> = {}) => [{ path: '/cron/job', schedule: '0 * * * *', ...extra }];

describe.each(databaseKinds())('cron policies (injected clock) on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  const runs = async () => (await allRuns(testDb.db)).map((r) => ({ tick: iso(r.scheduledFor), attempt: r.attempt, status: r.status, trigger: r.trigger }));

  it('retries: a failed scheduled run is tried again with backoff, each attempt a row of its tick, once across two instances', async () => {
    let calls = 0;
    const finalFailures: string[] = [];
    const clock = new ManualClock(at(9, 59, 59));
    const jobs = jobsOf({
      job: { retries: { attempts: 3, delayMs: 60_000 }, run: () => (++calls < 3 ? Promise.reject(new Error(`boom ${calls}`)) : undefined) },
    });
    const [a, b] = await Promise.all(
      [0, 1].map(() => createHarness(testDb.db, { clock, jobs, crons: hourly(), onRunFailed: (r) => void finalFailures.push(r.error) })),
    );
    const tickBoth = async (ms: number) => {
      clock.set(ms);
      await Promise.all([a!.cron.tick(), b!.cron.tick()]);
      await Promise.all([a!.cron.idle(5000), b!.cron.idle(5000)]);
    };
    await tickBoth(at(9, 59, 59));
    await tickBoth(at(10, 0)); // attempt 1 fails: attempt 2 due 10:01
    await tickBoth(at(10, 0, 59)); // not due yet
    expect(await runs()).toEqual([
      { tick: iso(at(10)), attempt: 1, status: 'failed', trigger: 'schedule' },
      { tick: iso(at(10)), attempt: 2, status: 'pending', trigger: 'schedule' },
    ]);
    await tickBoth(at(10, 1)); // attempt 2 fails: attempt 3 due 2 min later (exponential)
    await tickBoth(at(10, 2, 59));
    expect((await runs()).map((r) => r.status)).toEqual(['failed', 'failed', 'pending']);
    await tickBoth(at(10, 3)); // attempt 3 succeeds
    expect(await runs()).toEqual(
      [1, 2, 3].map((attempt) => ({ tick: iso(at(10)), attempt, status: attempt === 3 ? 'succeeded' : 'failed', trigger: 'schedule' })),
    );
    expect(calls).toBe(3);
    const all = await allRuns(testDb.db);
    expect(all.slice(1).map((r) => Number(r.retryOf))).toEqual([Number(all[0]!.id), Number(all[0]!.id)]);
    expect(finalFailures).toEqual([]); // retried failures are not alerted
    const [job] = await a!.cron.listJobs();
    expect(job).toMatchObject({ attempts: 3, lastRun: { status: 'succeeded', attempt: 3 } });
    await Promise.all([a!.cron.stop(), b!.cron.stop()]);
  });

  it('retries: out of attempts the tick stays failed (and that is alerted); manual runs are not retried', async () => {
    const finalFailures: string[] = [];
    const clock = new ManualClock(at(9, 59, 59));
    const h = await createHarness(testDb.db, {
      clock,
      jobs: jobsOf({ job: { retries: { attempts: 2, delayMs: 1000, backoff: 'fixed' }, run: () => Promise.reject(new Error('always')) } }),
      crons: hourly(),
      onRunFailed: (r) => void finalFailures.push(r.error),
    });
    for (const ms of [at(9, 59, 59), at(10), at(10, 0, 1), at(10, 0, 2), at(10, 0, 3)]) {
      clock.set(ms);
      await h.cron.tick();
      await h.cron.idle(5000);
    }
    expect((await h.cron.runJob('job', 'cli')).status).toBe('failed');
    expect(await runs()).toEqual([
      { tick: iso(at(10)), attempt: 1, status: 'failed', trigger: 'schedule' },
      { tick: iso(at(10)), attempt: 2, status: 'failed', trigger: 'schedule' },
      { tick: null, attempt: 1, status: 'failed', trigger: 'cli' },
    ]);
    expect(finalFailures).toEqual(['always', 'always']); // the tick's last attempt, and the manual run
    await h.cron.stop();
  });

  it("catchUp 'all': after 6 hours down, an hourly job with a 12 h window runs its 6 missed ticks once each, in order; the window and the cap bound it", async () => {
    const order: string[] = [];
    const jobs = (window: string, max: number) =>
      jobsOf({ job: { catchUp: 'all', catchUpWindow: window, catchUpMax: max, run: ({ scheduledFor }) => void order.push(iso(scheduledFor)!) } });
    const clock = new ManualClock(at(2, 59, 59));
    const before = await createHarness(testDb.db, { clock, jobs: jobs('12h', 24), crons: hourly() });
    await before.cron.tick();
    clock.set(at(3));
    await before.cron.tick(); // 03:00 runs, then the process goes down
    await before.cron.stop();

    clock.set(at(9, 30)); // back up at 09:30: 04:00 … 09:00 were missed
    const after = await createHarness(testDb.db, { clock, jobs: jobs('12h', 24), crons: hourly() });
    const [outcome] = await after.cron.tick();
    expect(outcome).toMatchObject({ kind: 'caught-up' });
    await expect.poll(() => order.length, { timeout: 10_000 }).toBe(7);
    expect(await after.cron.idle(5000)).toBe(true);
    expect(order).toEqual([3, 4, 5, 6, 7, 8, 9].map((h) => iso(at(h))));
    expect((await runs()).every((r) => r.status === 'succeeded' && r.attempt === 1)).toBe(true);
    await after.cron.tick(); // nothing twice
    expect(await after.cron.idle(5000)).toBe(true);
    expect(order).toHaveLength(7);
    await after.cron.stop();

    clock.set(at(15, 30)); // down again from 09:30: 10:00 … 15:00 missed, but a 3 h window and a cap of 2
    const bounded = await createHarness(testDb.db, { clock, jobs: jobs('3h', 2), crons: hourly() });
    await bounded.cron.tick();
    await expect.poll(() => order.length, { timeout: 10_000 }).toBe(9);
    expect(await bounded.cron.idle(5000)).toBe(true);
    expect(order.slice(7)).toEqual([iso(at(14)), iso(at(15))]);
    await bounded.cron.stop();
  });

  it("overlap 'queue-one': a tick during a run waits and runs as soon as it ends; a third is skipped", async () => {
    const gates = [deferred(), deferred()];
    const started: string[] = [];
    const clock = new ManualClock(at(9, 59, 59));
    const h = await createHarness(testDb.db, {
      clock,
      jobs: jobsOf({ job: { overlap: 'queue-one', run: ({ scheduledFor }) => (started.push(iso(scheduledFor)!), gates[started.length - 1]?.promise) } }),
      crons: [{ path: '/cron/job', schedule: '* * * * *' }],
    });
    for (const ms of [at(9, 59, 59), at(10), at(10, 1), at(10, 2)]) {
      clock.set(ms);
      await h.cron.tick();
    }
    expect(started).toEqual([iso(at(10))]);
    expect((await runs()).map((r) => [r.tick, r.status])).toEqual([
      [iso(at(10)), 'running'],
      [iso(at(10, 1)), 'pending'],
      [iso(at(10, 2)), 'skipped'],
    ]);
    expect((await allRuns(testDb.db))[2]!.error).toMatch(/already waits behind it \(overlap "queue-one"\)/);
    gates[0]!.resolve();
    await expect.poll(() => started.length).toBe(2); // no scheduler pass needed: the end of the run starts it
    expect(started[1]).toBe(iso(at(10, 1)));
    gates[1]!.resolve();
    expect(await h.cron.idle(5000)).toBe(true);
    expect((await runs()).map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'skipped']);
    await h.cron.stop();
  });

  it('pause: every instance skips scheduled ticks with the reason, also after a restart; manual runs still run; resume does not run what was missed', async () => {
    let ran = 0;
    const clock = new ManualClock(at(9, 59, 59));
    const jobs = jobsOf({ job: { run: () => void ran++ } });
    const a = await createHarness(testDb.db, { clock, jobs, crons: hourly() });
    const b = await createHarness(testDb.db, { clock, jobs, crons: hourly() });
    await Promise.all([a.cron.tick(), b.cron.tick()]);
    expect(await a.cron.pause('job')).toEqual({ job: 'job', paused: true, changed: true });
    expect((await b.cron.pause('job')).changed).toBe(false);
    clock.set(at(10));
    await b.cron.tick(); // the other instance obeys at once
    const restarted = await createHarness(testDb.db, { clock, jobs, crons: hourly() });
    await restarted.cron.tick();
    clock.set(at(11));
    await restarted.cron.tick(); // and a restarted one
    expect((await restarted.cron.listJobs())[0]!.pausedAt).toEqual(new Date(at(9, 59, 59)));
    expect((await a.cron.runJob('job', 'cli')).status).toBe('succeeded');
    expect(await a.cron.resume('job')).toEqual({ job: 'job', paused: false, changed: true });
    clock.set(at(11, 30));
    await restarted.cron.tick();
    clock.set(at(12));
    await restarted.cron.tick();
    expect(await restarted.cron.idle(5000)).toBe(true);
    expect(await runs()).toEqual([
      { tick: iso(at(10)), attempt: 1, status: 'skipped', trigger: 'schedule' },
      { tick: iso(at(11)), attempt: 1, status: 'skipped', trigger: 'schedule' },
      { tick: null, attempt: 1, status: 'succeeded', trigger: 'cli' },
      { tick: iso(at(12)), attempt: 1, status: 'succeeded', trigger: 'schedule' },
    ]);
    expect((await allRuns(testDb.db))[0]!.error).toBe('paused: scheduled ticks are skipped until `hookrun cron resume job`');
    expect(ran).toBe(2);
    await Promise.all([a.cron.stop(), b.cron.stop(), restarted.cron.stop()]);
  });

  it('resume --catch-up runs the ticks skipped while paused by the catch-up policy (latest: the last one)', async () => {
    const ticks: string[] = [];
    const clock = new ManualClock(at(9, 59, 59));
    const h = await createHarness(testDb.db, {
      clock,
      jobs: jobsOf({ job: { run: ({ scheduledFor }) => void ticks.push(iso(scheduledFor)!) } }),
      crons: hourly(),
    });
    await h.cron.tick();
    await h.cron.pause('job');
    for (const hh of [10, 11]) {
      clock.set(at(hh));
      await h.cron.tick();
    }
    clock.set(at(11, 20));
    expect(await h.cron.resume('job', { catchUp: true })).toEqual({ job: 'job', paused: false, changed: true, caughtUp: 1 });
    await h.cron.tick();
    expect(await h.cron.idle(5000)).toBe(true);
    expect(ticks).toEqual([iso(at(11))]);
    expect((await runs()).map((r) => [r.tick, r.status])).toEqual([
      [iso(at(10)), 'skipped'],
      [iso(at(11)), 'succeeded'],
    ]);
    await h.cron.stop();
  });

  it('backfill: a dry run lists the ticks; then each tick without a run runs once, oldest first; again, nothing runs twice', async () => {
    const ticks: string[] = [];
    const clock = new ManualClock(at(4, 59, 59));
    const h = await createHarness(testDb.db, {
      clock,
      jobs: jobsOf({ job: { run: ({ scheduledFor }) => void ticks.push(iso(scheduledFor)!) } }),
      crons: hourly(),
    });
    await h.cron.tick();
    clock.set(at(5));
    await h.cron.tick(); // 05:00 has a run already
    expect(await h.cron.idle(5000)).toBe(true);
    clock.set(at(12));
    const range = { from: new Date(at(3)), to: new Date(at(7)) };
    const dry = await h.cron.backfill('job', { ...range, dryRun: true });
    expect(dry.ticks).toEqual([3, 4, 5, 6, 7].map((hh) => ({ at: iso(at(hh)), hasRun: hh === 5 })));
    expect(dry.queued).toBe(0);
    expect((await runs()).length).toBe(1);
    const real = await h.cron.backfill('job', { ...range, dryRun: false });
    expect(real.queued).toBe(4);
    for (let n = await h.cron.runDue('job'); n > 0; n = await h.cron.runDue('job')) await h.cron.idle(5000);
    expect(ticks).toEqual([5, 3, 4, 6, 7].map((hh) => iso(at(hh))));
    expect((await h.cron.backfill('job', { ...range, dryRun: false })).queued).toBe(0);
    await expect(h.cron.backfill('job', { from: new Date(at(3)), to: new Date(at(13)), dryRun: true })).rejects.toThrow(/in the future/);
    // a typo in --from must not queue a year of ticks: past 1,000 the range is refused, nothing queued
    const before = (await runs()).length;
    await expect(h.cron.backfill('job', { from: new Date(at(12) - 1001 * 3_600_000), to: new Date(at(12)), dryRun: false })).rejects.toThrow(
      /more than 1000 ticks/,
    );
    expect((await runs()).length).toBe(before);
    await h.cron.stop();
  });
});
