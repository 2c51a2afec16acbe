import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withHttpTargets } from '../../src/cron/http-target.js';
import { ConfigError } from '../../src/errors.js';
import { parseFlowOptions } from '../../src/flow/options.js';
import { parseSince } from '../../src/time/since.js';
import { parseDuration, readDuration } from '../../src/time/duration.js';
import { testConfig } from '../helpers/config.js';

/** The HTTP targets start-up builds from a platform.json with these crons. */
function targetsFrom(crons: unknown[]) {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-durations-'));
  try {
    writeFileSync(join(dir, 'platform.json'), JSON.stringify({ crons }));
    return withHttpTargets(new Map(), testConfig({ PLATFORM_CONFIG: join(dir, 'platform.json') }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const target = (extra: Record<string, unknown>) => ({ name: 'billing-sync', url: 'https://billing.example.com/sync', schedule: '0 9 * * *', ...extra });

/** The message a call throws (it must throw). */
function thrown(call: () => unknown): string {
  try {
    call();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected it to throw');
}

const HINT = "write milliseconds (a number) or a number and a unit, like '500ms', '30s', '5m', '1h', '1d' or '1w'.";

describe('one duration grammar', () => {
  it('reads milliseconds and a number with a unit, ms to weeks, in any case', () => {
    const cases: Array<[unknown, number]> = [
      [250, 250],
      [0, 0],
      ['500ms', 500],
      ['1.5s', 1500],
      ['30s', 30_000],
      ['5m', 300_000],
      ['90m', 5_400_000],
      ['1h', 3_600_000],
      ['12 h', 43_200_000],
      ['3D', 259_200_000],
      ['1w', 604_800_000],
    ];
    for (const [text, ms] of cases) expect(readDuration(text), String(text)).toBe(ms);
    for (const bad of ['30 secs', 'soon', '', '-1s', '1y', '1e3', 'ms', null, undefined, Number.NaN, -5, {}])
      expect(readDuration(bad), String(bad)).toBeUndefined();
  });

  it('platform.json takes "30s" for catchUpWindow as it does for rateLimit.period', () => {
    const job = targetsFrom([target({ catchUp: 'all', catchUpWindow: '30s', rateLimit: { limit: 2, period: '30s' } })]).get('billing-sync')!;
    expect(job.catchUpWindowMs).toBe(30_000);
    expect(job.limits?.rate).toEqual({ limit: 2, periodMs: 30_000 });
  });

  it('the same bad duration gets the same message wherever it is written', () => {
    const problem = `"30 secs" is not a duration: ${HINT}`;
    const window = thrown(() => targetsFrom([target({ catchUp: 'all', catchUpWindow: '30 secs' })]));
    const period = thrown(() => targetsFrom([target({ rateLimit: { limit: 2, period: '30 secs' } })]));
    const flow = thrown(() => parseFlowOptions({ rateLimit: { limit: 2, period: '30 secs' } }));
    expect(window).toMatch(/platform\.json crons\[0\]: catchUpWindow "30 secs"/);
    expect(window.endsWith(problem)).toBe(true);
    expect(period).toBe(period.replace(/rateLimit\.period .*/, `rateLimit.period ${problem}`));
    expect(period).toMatch(/platform\.json crons\[0\]: rateLimit\.period "30 secs"/);
    expect(flow).toBe(`rateLimit.period ${problem}`);
    expect(() => targetsFrom([target({ catchUpWindow: '30 secs' })])).toThrow(ConfigError);
  });

  it('zero only where it means none', () => {
    expect(parseDuration('0s', 'catchUpWindow', { zero: true })).toBe(0);
    expect(thrown(() => parseDuration('0s', 'debounce.period'))).toBe(`debounce.period "0s" must be longer than zero: ${HINT}`);
  });

  it('--since takes the same grammar back from now', () => {
    const now = Date.UTC(2026, 10, 20, 12);
    expect(parseSince('30s', now).getTime()).toBe(now - 30_000);
    expect(parseSince('3d', now).getTime()).toBe(now - 3 * 86_400_000);
    expect(parseSince('2026-11-20', now).toISOString()).toBe('2026-11-20T00:00:00.000Z');
  });
});
