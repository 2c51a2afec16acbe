import { describe, expect, it } from 'vitest';
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
});
