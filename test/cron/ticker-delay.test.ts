import { Cron } from 'croner';
import { describe, expect, it, vi } from 'vitest';
import { parseSchedule } from '../../src/cron/schedule.js';
import { delayToNextTick } from '../../src/cron/ticker.js';

describe('delayToNextTick (how long the scheduler sleeps between passes)', () => {
  const at = (iso: string) => Date.parse(iso);

  it('wakes just after the next tick when it is sooner than the interval', () => {
    const everyMinute = { schedule: parseSchedule('* * * * *') };
    expect(delayToNextTick([everyMinute], at('2026-01-01T00:00:59.700Z'), 1000)).toBe(302);
  });

  it('never sleeps longer than the interval (it also polls for catch-up and other instances)', () => {
    const daily = { schedule: parseSchedule('0 1 * * *') };
    expect(delayToNextTick([daily], at('2026-01-01T00:00:00Z'), 1000)).toBe(1000);
  });

  it('takes the earliest job', () => {
    const entries = [{ schedule: parseSchedule('0 1 * * *') }, { schedule: parseSchedule('*/5 * * * *') }];
    expect(delayToNextTick(entries, at('2026-01-01T00:04:59.950Z'), 1000)).toBe(52);
  });

  it("counts from a job's cursor: a tick that fell due while the pass ran is taken at once, not a tick later", () => {
    const everyMinute = { schedule: parseSchedule('* * * * *'), after: at('2026-01-01T00:00:30Z') };
    expect(delayToNextTick([everyMinute], at('2026-01-01T00:01:00.500Z'), 1000)).toBe(0);
  });

  it('asks croner once, not on every pass, while no tick is due since the same cursor (each answer is costly in a time zone)', () => {
    const schedule = parseSchedule('30 2 * * *', 'America/New_York');
    const cursor = at('2026-03-07T12:00:00Z');
    const nextRun = vi.spyOn(Cron.prototype, 'nextRun');
    try {
      for (let now = cursor; now < cursor + 3_600_000; now += 1000) {
        expect(schedule.latestBetween(cursor, now)).toBeNull();
        delayToNextTick([{ schedule, after: cursor }], now, 1000);
      }
      expect(nextRun).toHaveBeenCalledTimes(1);
    } finally {
      nextRun.mockRestore();
    }
  });
});
