import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { resolveJob } from '../../src/cron/job.js';
import { parseSchedule, validateCrons } from '../../src/cron/schedule.js';
import { tickInZone } from '../../src/cron/time-zone.js';
import { ConfigError } from '../../src/errors.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { allRuns, createHarness, jobsOf } from './support.js';

const iso = (d: Date | number) => new Date(d).toISOString();
const ticks = (expression: string, zone: string, from: string, count: number) => parseSchedule(expression, zone).nextRuns(count, Date.parse(from)).map(iso);

describe('time zones: the expression is read on the wall clock of its zone', () => {
  it('09:00 Europe/Berlin is 08:00Z in winter and 07:00Z in summer', () => {
    expect(ticks('0 9 * * *', 'Europe/Berlin', '2026-03-27T00:00:00Z', 4)).toEqual([
      '2026-03-27T08:00:00.000Z',
      '2026-03-28T08:00:00.000Z',
      '2026-03-29T07:00:00.000Z', // clocks went forward that night
      '2026-03-30T07:00:00.000Z',
    ]);
  });

  it('a 02:30 tick on the night it does not exist (clocks spring forward at 02:00) runs once, an hour later, at 03:30', () => {
    expect(ticks('30 2 * * *', 'America/New_York', '2026-03-07T00:00:00Z', 3)).toEqual([
      '2026-03-07T07:30:00.000Z', // 02:30 EST
      '2026-03-08T07:30:00.000Z', // 03:30 EDT: 02:30 never happened
      '2026-03-09T06:30:00.000Z', // 02:30 EDT
    ]);
    // an hourly schedule that night: 01:00, then 03:00 once (not twice)
    expect(ticks('0 * * * *', 'America/New_York', '2026-03-08T05:30:00Z', 3)).toEqual([
      '2026-03-08T06:00:00.000Z',
      '2026-03-08T07:00:00.000Z',
      '2026-03-08T08:00:00.000Z',
    ]);
  });

  it('a 01:30 tick on the night it happens twice (clocks fall back at 02:00) runs once, at the first 01:30', () => {
    expect(ticks('30 1 * * *', 'America/New_York', '2026-10-31T00:00:00Z', 3)).toEqual([
      '2026-10-31T05:30:00.000Z', // 01:30 EDT
      '2026-11-01T05:30:00.000Z', // the first 01:30 (EDT); the second (06:30Z, EST) does not run
      '2026-11-02T06:30:00.000Z', // 01:30 EST
    ]);
  });

  it('listings show the tick in its zone and in UTC', () => {
    expect(tickInZone('2026-11-24T08:00:00Z', 'Europe/Berlin')).toBe('2026-11-24 09:00 Europe/Berlin (08:00Z)');
    expect(tickInZone('2026-11-24T08:00:00Z', 'UTC')).toBe('2026-11-24 08:00:00Z');
  });

  it("platform.json's timezone wins over the job file's; the job file's is used when the entry has none; UTC otherwise", () => {
    const jobs = new Map([
      ['zoned', resolveJob({ timezone: 'Asia/Tokyo', run() {} })],
      ['plain', resolveJob({ run() {} })],
    ]);
    const { scheduled } = validateCrons(
      [
        { path: '/cron/zoned', schedule: '0 9 * * *' },
        { path: '/cron/plain', schedule: '0 9 * * *' },
      ],
      jobs,
      'platform.json',
    );
    expect(scheduled.map((s) => s.schedule.timezone)).toEqual(['Asia/Tokyo', 'UTC']);
    const [entryWins] = validateCrons([{ path: '/cron/zoned', schedule: '0 9 * * *', timezone: 'Europe/Paris' }], jobs, 'platform.json').scheduled;
    expect(entryWins!.schedule.timezone).toBe('Europe/Paris');
  });

  it('an unknown zone stops start-up, naming the entry (or the job file)', () => {
    const jobs = new Map([['plain', resolveJob({ run() {} })]]);
    const bad = () =>
      validateCrons(
        [
          { path: '/cron/plain', schedule: '0 9 * * *' },
          { path: '/cron/plain2', schedule: '0 9 * * *', timezone: 'Europe/Berlim' },
        ],
        new Map([...jobs, ['plain2', resolveJob({ run() {} })]]),
        'platform.json',
      );
    expect(bad).toThrow(ConfigError);
    expect(bad).toThrow('platform.json crons[1].timezone "Europe/Berlim": not an IANA time zone');
    expect(() => resolveJob({ timezone: 'Mars/Olympus', run() {} })).toThrow('defineJob: timezone "Mars/Olympus" is not an IANA time zone');
  });
});

describe.each(databaseKinds())('the scheduler across daylight-saving nights (injected clock) on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  /** Tick every 5 minutes of injected time from `from` to `to`; the scheduled ticks that ran. */
  async function runNights(expression: string, from: string, to: string): Promise<string[]> {
    const clock = new ManualClock(Date.parse(from));
    const h = await createHarness(testDb.db, {
      clock,
      jobs: jobsOf({ report: { run() {} } }),
      crons: [{ path: '/cron/report', schedule: expression, timezone: 'America/New_York' }],
    });
    for (; clock.now() <= Date.parse(to); clock.advance(5 * 60_000)) await h.cron.tick();
    expect(await h.cron.idle(5000)).toBe(true);
    await h.cron.stop();
    return (await allRuns(testDb.db)).map((r) => iso(r.scheduledFor!));
  }

  it('spring forward: 02:30 runs once, at 03:30 EDT', async () => {
    expect(await runNights('30 2 * * *', '2026-03-07T12:00:00Z', '2026-03-09T12:00:00Z')).toEqual(['2026-03-08T07:30:00.000Z', '2026-03-09T06:30:00.000Z']);
  });

  it('fall back: 01:30 runs once, at the first 01:30 (EDT)', async () => {
    expect(await runNights('30 1 * * *', '2026-10-31T12:00:00Z', '2026-11-02T12:00:00Z')).toEqual(['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z']);
  });
});
