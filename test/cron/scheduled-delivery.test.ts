import { beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { SCHEDULED_DELIVERY_EARLY_MS } from '../../src/cron/cron-service.js';
import { SECRETS } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { allRuns, createHarness, jobsOf, type CronHarness } from './support.js';

const auth = { Authorization: `Bearer ${SECRETS.cron}` };
const vercel = { ...auth, 'User-Agent': 'vercel-cron/1.0' };
const HOURLY = [{ path: '/cron/count', schedule: '0 * * * *' }];
const at = (h: number, m = 0, s = 0) => Date.UTC(2026, 0, 1, h, m, s);

describe.each(databaseKinds())('scheduled deliveries (Vercel Cron) on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  let runs: number;
  let clock: ManualClock;
  let h: CronHarness;
  const instance = (options: { crons?: typeof HOURLY } = {}) =>
    createHarness(testDb.db, { clock, crons: options.crons ?? HOURLY, jobs: jobsOf({ count: { run: async () => void runs++ } }) });

  beforeEach(async () => {
    runs = 0;
    clock = new ManualClock(at(10, 0, 42));
    h = await instance();
  });

  it('two deliveries of one tick: both 200 OK, one run recorded as schedule for that tick', async () => {
    const first = await h.app.request('/cron/count', { headers: vercel });
    clock.advance(20_000);
    const second = await h.app.request('/cron/count', { headers: vercel });
    expect([first.status, await first.text(), second.status, await second.text()]).toEqual([200, 'OK', 200, 'OK']);
    expect(second.headers.get('x-hookrun-run')).toBe('duplicate');
    expect(runs).toBe(1);
    expect(await allRuns(testDb.db)).toMatchObject([{ job: 'count', trigger: 'schedule', status: 'succeeded', scheduledFor: new Date(at(10)) }]);
  });

  it('the next tick runs again; a late delivery still belongs to the tick before it', async () => {
    await h.app.request('/cron/count', { headers: vercel });
    clock.set(at(10, 59, 50)); // 59 min late for 10:00, 10 s before 11:00: still 10:00's
    await h.app.request('/cron/count', { headers: vercel });
    clock.set(at(11, 0, 1));
    await h.app.request('/cron/count', { headers: vercel });
    expect(runs).toBe(2);
    expect((await allRuns(testDb.db)).map((r) => r.scheduledFor?.getTime())).toEqual([at(10), at(11)]);
  });

  it(`a delivery up to ${SCHEDULED_DELIVERY_EARLY_MS} ms early (a clock ahead of ours) belongs to the coming tick`, async () => {
    clock.set(at(10, 59, 57));
    await h.app.request('/cron/count', { headers: vercel });
    clock.set(at(11, 0, 0) + 400);
    await h.app.request('/cron/count', { headers: vercel });
    expect(runs).toBe(1);
    expect((await allRuns(testDb.db)).map((r) => r.scheduledFor?.getTime())).toEqual([at(11)]);
  });

  it('any other caller runs the job every time, recorded as http with no tick', async () => {
    for (const headers of [auth, { ...auth, 'User-Agent': 'curl/8.5.0' }, auth]) {
      expect((await h.app.request('/cron/count', { method: 'POST', headers })).status).toBe(200);
    }
    await h.app.request('/cron/count', { headers: vercel });
    expect(runs).toBe(4);
    expect((await allRuns(testDb.db)).map((r) => r.trigger)).toEqual(['http', 'http', 'http', 'schedule']);
  });

  it('a tick the built-in scheduler already ran is not run again by the Vercel delivery', async () => {
    clock.set(at(10, 0, 0));
    await h.cron.tick();
    await h.cron.idle();
    clock.set(at(10, 0, 30));
    const res = await h.app.request('/cron/count', { headers: vercel });
    expect([res.status, await res.text()]).toEqual([200, 'OK']);
    expect(runs).toBe(1);
  });

  it('two instances receiving the same tick at once run it once', async () => {
    const other = await instance();
    const answers = await Promise.all([
      h.app.request('/cron/count', { headers: vercel }),
      other.app.request('/cron/count', { headers: vercel }),
      h.app.request('/cron/count', { headers: vercel }),
      other.app.request('/cron/count', { headers: vercel }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(runs).toBe(1);
    expect(await allRuns(testDb.db)).toHaveLength(1);
  });

  it('a job with no platform.json entry has no tick: each delivery runs, as a manual call', async () => {
    const unscheduled = await instance({ crons: [] });
    await unscheduled.app.request('/cron/count', { headers: vercel });
    await unscheduled.app.request('/cron/count', { headers: vercel });
    expect(runs).toBe(2);
    expect((await allRuns(testDb.db)).map((r) => r.trigger)).toEqual(['http', 'http']);
  });

  it('a job with no platform.json entry, delivered with x-vercel-cron-schedule: that expression (UTC) gives the tick, so repeats run once', async () => {
    const unscheduled = await instance({ crons: [] });
    const named = { ...vercel, 'x-vercel-cron-schedule': '*/15 * * * *' };
    const first = await unscheduled.app.request('/cron/count', { headers: named });
    clock.advance(30_000);
    const second = await unscheduled.app.request('/cron/count', { headers: named });
    expect(second.headers.get('x-hookrun-run')).toBe('duplicate');
    expect([first.status, second.status, runs]).toEqual([200, 200, 1]);
    expect(await allRuns(testDb.db)).toMatchObject([{ trigger: 'schedule', scheduledFor: new Date(at(10)) }]);
  });

  it('the schedule header alone marks a scheduled delivery (a Vercel Schedules path target), and one that does not parse runs as a manual call', async () => {
    const unscheduled = await instance({ crons: [] });
    await unscheduled.app.request('/cron/count', { headers: { ...auth, 'x-vercel-cron-schedule': '0 * * * *' } });
    await unscheduled.app.request('/cron/count', { headers: { ...auth, 'x-vercel-cron-schedule': '0 * * * *' } });
    await unscheduled.app.request('/cron/count', { headers: { ...auth, 'x-vercel-cron-schedule': 'not a schedule' } });
    expect(runs).toBe(2);
    expect((await allRuns(testDb.db)).map((r) => r.trigger)).toEqual(['schedule', 'http']);
  });
});
