import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { allRuns, createHarness, deferred, faultyDatabase, jobsOf, type CronHarness } from './support.js';

const at = (hh: number, mm = 0, ss = 0) => Date.UTC(2026, 10, 23, hh, mm, ss);
const iso = (d: Date | number | null) => (d === null ? null : new Date(d).toISOString());
const hourly = (...jobs: string[]) => jobs.map((job) => ({ path: `/cron/${job}`, schedule: '0 * * * *' }));
/** The INSERT that queues a pending run (a retry); tolerant of a schema-qualified table name. */
const RETRY_INSERT = /INSERT INTO (hookrun\.)?cron_runs \(job, trigger, scheduled_for, attempt, retry_of/;

describe.each(databaseKinds())('cron retries survive faults (injected clock) on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  const runs = async () => (await allRuns(testDb.db)).map((r) => ({ job: r.job, tick: iso(r.scheduledFor), attempt: r.attempt, status: r.status }));
  const tickAll = async (clock: ManualClock, instances: CronHarness[], ms: number) => {
    clock.set(ms);
    await Promise.all(instances.map((h) => h.cron.tick()));
    await Promise.all(instances.map((h) => h.cron.idle(5000)));
  };

  it('a failed run whose retry insert fails is not recorded failed-without-retry: both or neither, and the tick is retried once its lease expires', async () => {
    let calls = 0;
    const alerted: string[] = [];
    const fault: { failOn?: RegExp } = {};
    const clock = new ManualClock(at(9, 59, 59));
    const jobs = jobsOf({
      job: {
        timeoutMs: 5 * 60_000,
        retries: { attempts: 2, delayMs: 60_000, backoff: 'fixed' },
        run: () => (++calls === 1 ? Promise.reject(new Error('boom')) : undefined),
      },
    });
    const a = await createHarness(faultyDatabase(testDb.db, fault), { clock, jobs, crons: hourly('job'), onRunFailed: (r) => void alerted.push(r.error) });
    const b = await createHarness(testDb.db, { clock, jobs, crons: hourly('job'), onRunFailed: (r) => void alerted.push(r.error) });
    await tickAll(clock, [a, b], at(9, 59, 59));
    fault.failOn = RETRY_INSERT;
    await tickAll(clock, [a], at(10)); // attempt 1 fails on a; queueing its retry fails
    expect(calls).toBe(1);
    expect(await runs()).toEqual([{ job: 'job', tick: iso(at(10)), attempt: 1, status: 'running' }]);
    fault.failOn = undefined;
    await tickAll(clock, [a, b], at(10, 4, 59)); // its lease (the 5 min timeout) has not expired
    expect(await runs()).toEqual([{ job: 'job', tick: iso(at(10)), attempt: 1, status: 'running' }]);
    await tickAll(clock, [a, b], at(10, 5)); // expired: one instance fails it and queues attempt 2, due 1 min later
    expect(await runs()).toEqual([
      { job: 'job', tick: iso(at(10)), attempt: 1, status: 'failed' },
      { job: 'job', tick: iso(at(10)), attempt: 2, status: 'pending' },
    ]);
    await tickAll(clock, [a, b], at(10, 6));
    await tickAll(clock, [a, b], at(10, 7));
    expect(calls).toBe(2);
    expect((await runs()).map((r) => [r.attempt, r.status])).toEqual([
      [1, 'failed'],
      [2, 'succeeded'],
    ]);
    expect(alerted).toEqual([]);
    await Promise.all([a.cron.stop(), b.cron.stop()]);
  });

  it('a run killed mid-run (its row left running past its lease) is retried once by the instances that see it expire, by its policy', async () => {
    const calls: string[] = [];
    const clock = new ManualClock(at(10, 0, 30));
    const jobs = jobsOf({
      retried: { timeoutMs: 5 * 60_000, retries: { attempts: 3, delayMs: 60_000 }, run: () => void calls.push('retried') },
      once: { timeoutMs: 5 * 60_000, run: () => void calls.push('once') },
    });
    // the 10:00 tick of each job was claimed by a process that was then killed: its rows stay `running`
    for (const job of ['retried', 'once']) {
      await testDb.db.query(
        `INSERT INTO hookrun.cron_runs (job, trigger, scheduled_for, started_at, status, expires_at, instance) VALUES ($1, 'schedule', $2, $2, 'running', $3, 'dead-host:4242')`,
        [job, new Date(at(10)), new Date(at(10, 5))],
      );
    }
    const instances = await Promise.all([0, 1, 2].map(() => createHarness(testDb.db, { clock, jobs, crons: hourly('retried', 'once') })));
    await tickAll(clock, instances, at(10, 0, 30));
    await tickAll(clock, instances, at(10, 5, 30)); // expired, no tick due: attempt 2 queued for 10:06 (expiry + 1 min)
    expect(await runs()).toEqual([
      { job: 'retried', tick: iso(at(10)), attempt: 1, status: 'failed' },
      { job: 'once', tick: iso(at(10)), attempt: 1, status: 'failed' },
      { job: 'retried', tick: iso(at(10)), attempt: 2, status: 'pending' },
    ]);
    expect((await allRuns(testDb.db))[0]!.error).toMatch(/^abandoned: /);
    for (const ms of [at(10, 6), at(10, 6, 1), at(10, 30)]) await tickAll(clock, instances, ms);
    expect(calls).toEqual(['retried']); // once across three instances; the job with no retries is not retried
    const all = await allRuns(testDb.db);
    expect(all.map((r) => [r.job, r.attempt, r.status])).toEqual([
      ['retried', 1, 'failed'],
      ['once', 1, 'failed'],
      ['retried', 2, 'succeeded'],
    ]);
    expect(Number(all[2]!.retryOf)).toBe(Number(all[0]!.id));
    await Promise.all(instances.map((h) => h.cron.stop()));
  });

  it('a run that outlives its lease but then succeeds withdraws the retry another instance queued for it', async () => {
    const gate = deferred();
    let calls = 0;
    const clock = new ManualClock(at(9, 59, 59));
    const jobs = jobsOf({ job: { timeoutMs: 5 * 60_000, retries: { attempts: 2, delayMs: 60_000 }, run: () => (++calls === 1 ? gate.promise : undefined) } });
    const [a, b] = await Promise.all([0, 1].map(() => createHarness(testDb.db, { clock, jobs, crons: hourly('job') })));
    await tickAll(clock, [a!, b!], at(9, 59, 59));
    clock.set(at(10));
    await a!.cron.tick(); // a's run hangs
    await tickAll(clock, [b!], at(10, 5, 30)); // b sees it expire: failed, attempt 2 queued for 10:06
    expect((await runs()).map((r) => r.status)).toEqual(['failed', 'pending']);
    gate.resolve();
    expect(await a!.cron.idle(5000)).toBe(true);
    await tickAll(clock, [a!, b!], at(10, 7));
    expect(calls).toBe(1);
    expect(await runs()).toEqual([{ job: 'job', tick: iso(at(10)), attempt: 1, status: 'succeeded' }]);
    await Promise.all([a!.cron.stop(), b!.cron.stop()]);
  });
});
