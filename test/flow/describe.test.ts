import { describe, expect, it } from 'vitest';
import { describeFlow, formatPeriod, NO_FLOW } from '../../src/flow/describe.js';
import { parseFlowOptions } from '../../src/flow/options.js';

const key = (event: { id: string }) => event.id;

describe('describeFlow', () => {
  it('says each option in one line, in the words an operator reads', () => {
    expect(describeFlow(parseFlowOptions({ concurrency: { limit: 5, key }, rateLimit: { limit: 100, period: '1s' }, order: 'key', key }))).toBe(
      'concurrency 5 per key · rate 100/1s · order by key',
    );
    expect(describeFlow(parseFlowOptions({ debounce: { period: '5s', key, maxWait: 90_000 }, priority: () => 0 }))).toBe('debounce 5s (max 90s) · priority');
    expect(describeFlow(parseFlowOptions({ rateLimit: { limit: 10, period: '1m', key } }))).toBe('rate 10/1m per key');
    expect(describeFlow(parseFlowOptions({ key }))).toBe(NO_FLOW);
    expect(describeFlow(undefined)).toBe('—');
  });

  it('prints a period in the largest unit it is a whole number of', () => {
    expect([1500, 1000, 60_000, 90 * 60_000, 7_200_000, 86_400_000, 0.5].map(formatPeriod)).toEqual(['1500ms', '1s', '1m', '90m', '2h', '1d', '0.5ms']);
  });
});
