import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { allRuns, createHarness, jobsOf } from './support.js';

const at = (hh: number, mm = 0, ss = 0) => Date.UTC(2026, 10, 23, hh, mm, ss);
const iso = (d: Date | number | null) => (d === null ? null : new Date(d).toISOString());
const hourly = [{ path: '/cron/job', schedule: '0 * * * *' }];

describe.each(databaseKinds())('a paused job’s pending runs (injected clock) on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  const runs = async () => (await allRuns(testDb.db)).map((r) => ({ tick: iso(r.scheduledFor), attempt: r.attempt, status: r.status }));

  it('a retry that falls due while its job is paused waits, and runs once the job is resumed', async () => {
    let calls = 0;
    const clock = new ManualClock(at(9, 59, 59));
    const jobs = jobsOf({ job: { retries: { attempts: 3, delayMs: 60_000 }, run: () => (++calls === 1 ? Promise.reject(new Error('boom')) : undefined) } });
    const h = await createHarness(testDb.db, { clock, jobs, crons: hourly });
    const tick = async (ms: number) => {
      clock.set(ms);
      await h.cron.tick();
      expect(await h.cron.idle(5000)).toBe(true);
    };
    await tick(at(9, 59, 59));
    await tick(at(10)); // attempt 1 fails: attempt 2 due 10:01
    expect(await h.cron.pause('job')).toMatchObject({ paused: true, changed: true });
    await tick(at(10, 1)); // due, but paused
    await tick(at(10, 30));
    expect(calls).toBe(1);
    expect(await runs()).toEqual([
      { tick: iso(at(10)), attempt: 1, status: 'failed' },
      { tick: iso(at(10)), attempt: 2, status: 'pending' },
    ]);
    expect(await h.cron.resume('job')).toMatchObject({ paused: false, changed: true });
    await tick(at(10, 31)); // resumed: the retry runs, not lost
    expect(calls).toBe(2);
    expect(await runs()).toEqual([
      { tick: iso(at(10)), attempt: 1, status: 'failed' },
      { tick: iso(at(10)), attempt: 2, status: 'succeeded' },
    ]);
    await h.cron.stop();
  });
});
