import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readPlatformConfig } from '../../src/config/platform.js';
import { resolveJob } from '../../src/cron/job.js';
import { loadJobs } from '../../src/cron/registry.js';
import { parseSchedule, validateCrons, vercelIncompatibilities } from '../../src/cron/schedule.js';
import { backoffMs } from '../../src/backoff.js';
import { ConfigError } from '../../src/errors.js';

const JOBS = new Map(['keep-alive', 'report'].map((name) => [name, resolveJob({ run() {} })]));
const validate = (crons: Array<{ path: string; schedule: string }>) => validateCrons(crons, JOBS, 'platform.json');
const at = (iso: string) => Date.parse(iso);

describe('platform.json validation', () => {
  it('accepts the shipped keep-alive entry without warnings', () => {
    const { scheduled, warnings } = validate([{ path: '/cron/keep-alive', schedule: '0 1 * * *' }]);
    expect(warnings).toEqual([]);
    expect(scheduled).toHaveLength(1);
    expect(scheduled[0]!.job).toBe('keep-alive');
    // daily at 01:00 UTC, not every 10 minutes
    expect(scheduled[0]!.schedule.nextRuns(3, at('2026-03-10T00:59:00Z')).map((d) => d.toISOString())).toEqual([
      '2026-03-10T01:00:00.000Z',
      '2026-03-11T01:00:00.000Z',
      '2026-03-12T01:00:00.000Z',
    ]);
  });

  it.each([
    ['61 * * * *', 'platform.json crons[0].schedule "61 * * * *": minute must be 0-59'],
    ['0 24 * * *', 'platform.json crons[0].schedule "0 24 * * *": hour must be 0-23'],
    ['0 0 0 * *', 'platform.json crons[0].schedule "0 0 0 * *": day-of-month must be 1-31'],
    ['0 0 1 13 *', 'platform.json crons[0].schedule "0 0 1 13 *": month must be 1-12 (or JAN-DEC)'],
    ['0 0 * * 8', 'platform.json crons[0].schedule "0 0 * * 8": day-of-week must be 0-7 (0 or 7 is Sunday, or SUN-SAT)'],
    ['* * *', 'platform.json crons[0].schedule "* * *": needs 5 fields (minute hour day-of-month month day-of-week), got 3'],
    ['*/0 * * * *', 'platform.json crons[0].schedule "*/0 * * * *": minute step "/0" must be a positive whole number'],
    ['5-1 * * * *', 'platform.json crons[0].schedule "5-1 * * * *": From value is larger than to value: \'5-1\''],
    ['a b c d e', 'platform.json crons[0].schedule "a b c d e": configuration entry 1 (a) contains illegal characters.'],
    ['0 0 30 2 *', 'platform.json crons[0].schedule "0 0 30 2 *": never matches a date (check day-of-month against month)'],
  ])('rejects the expression %j', (schedule, message) => {
    expect(() => validate([{ path: '/cron/keep-alive', schedule }])).toThrow(new ConfigError(message));
  });

  it('rejects a path outside /cron/', () => {
    expect(() => validate([{ path: '/api/keep-alive', schedule: '0 1 * * *' }])).toThrow('platform.json crons[0].path "/api/keep-alive": must be under /cron/');
  });

  it.each(['/cron/', '/cron/keep-alive/', '/cron/keep-alive?x=1', '/cron/Keep_Alive'])('rejects the malformed job path %j', (path) => {
    expect(() => validate([{ path, schedule: '0 1 * * *' }])).toThrow(`platform.json crons[0].path "${path}": must be /cron/<job>`);
  });

  it('rejects a path with no job file, listing the jobs there are', () => {
    expect(() =>
      validate([
        { path: '/cron/keep-alive', schedule: '0 1 * * *' },
        { path: '/cron/nope', schedule: '0 1 * * *' },
      ]),
    ).toThrow('platform.json crons[1].path "/cron/nope": no job file src/cron/jobs/nope.ts (jobs: keep-alive, report). Add the file or fix the path.');
  });

  it('rejects a duplicate path, naming both entries', () => {
    expect(() =>
      validate([
        { path: '/cron/keep-alive', schedule: '0 1 * * *' },
        { path: '/cron/keep-alive', schedule: '0 2 * * *' },
      ]),
    ).toThrow('platform.json crons[1].path "/cron/keep-alive": duplicate of crons[0]; give each job one entry.');
  });

  it('rejects bad JSON and a wrong shape with the file named (config.ts reads the file)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookrun-platform-'));
    const file = join(dir, 'platform.json');
    writeFileSync(file, '{ "crons": [ ');
    expect(() => readPlatformConfig(file)).toThrow(`${file}: is not valid JSON`);
    writeFileSync(file, '{ "crons": [ { "path": "/cron/keep-alive" } ] }');
    expect(() => readPlatformConfig(file)).toThrow(`${file} crons[0].schedule: must be a cron expression string`);
  });

  it.each([
    ['0 0 * * MON', 'it uses names like MON'],
    ['0 0 1 JAN *', 'it uses names like JAN'],
    ['0 0 0 * * *', 'it has 6 fields'],
    ['0 0 1 * 1', 'it sets both day-of-month and day-of-week'],
    ['0 0 L * *', 'it uses L, W, # or ?'],
    ['@daily', '"@daily" is a nickname'],
    ['0 0 * * 7', 'it uses 7 for Sunday'],
  ])('accepts %j with a warning that Vercel would refuse it', (schedule, reason) => {
    const { scheduled, warnings } = validate([{ path: '/cron/report', schedule }]);
    expect(scheduled).toHaveLength(1);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`platform.json crons[0].schedule "${schedule}": Vercel Cron would refuse this (`);
    expect(warnings[0]).toContain(reason);
    expect(warnings[0]).toContain('UTC');
  });

  it.each(['*/15 * * * *', '0 9-17 * * 1-5', '0 0 1,15 * *', '30 2 * 1-6 *'])('gives no warning for the Vercel-compatible %j', (schedule) => {
    expect(vercelIncompatibilities(schedule)).toEqual([]);
  });

  it('treats both day fields set as "either matches" (standard cron), in UTC', () => {
    // 2026-01-01 is a Thursday: the next 1st-of-month-or-Monday is Monday 5 January.
    expect(parseSchedule('0 0 1 * 1').next(at('2026-01-01T00:00:00Z'))).toBe(at('2026-01-05T00:00:00Z'));
  });
});

describe('latest tick between two times', () => {
  const hourly = parseSchedule('0 * * * *');

  it('finds the latest tick in (after, now], including one exactly at now', () => {
    expect(hourly.latestBetween(at('2026-01-01T09:00:00Z'), at('2026-01-01T13:30:00Z'))).toBe(at('2026-01-01T13:00:00Z'));
    expect(hourly.latestBetween(at('2026-01-01T12:00:00Z'), at('2026-01-01T13:00:00Z'))).toBe(at('2026-01-01T13:00:00Z'));
    expect(hourly.latestBetween(at('2026-01-01T13:00:00Z'), at('2026-01-01T13:59:59Z'))).toBeNull();
  });

  it('stays cheap over a long gap', () => {
    const everyMinute = parseSchedule('* * * * *');
    expect(everyMinute.latestBetween(at('2020-01-01T00:00:00Z'), at('2026-01-01T10:00:30Z'))).toBe(at('2026-01-01T10:00:00Z'));
    const yearly = parseSchedule('0 0 1 1 *');
    expect(yearly.latestBetween(at('2020-06-01T00:00:00Z'), at('2026-06-01T00:00:00Z'))).toBe(at('2026-01-01T00:00:00Z'));
  });
});

describe('job registry', () => {
  it('discovers keep-alive from src/cron/jobs', async () => {
    const jobs = await loadJobs();
    expect([...jobs.keys()]).toContain('keep-alive');
    expect(jobs.get('keep-alive')).toMatchObject({ overlap: 'skip', catchUp: 'latest', timeoutMs: 30_000 });
  });

  it('loads compiled .js jobs and ignores .d.ts, .map and helper files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookrun-jobs-'));
    writeFileSync(join(dir, 'nightly-report.js'), 'export default { timeoutMs: 1000, run: async () => {} };\n');
    writeFileSync(join(dir, 'nightly-report.js.map'), '{}');
    writeFileSync(join(dir, 'nightly-report.d.ts'), 'export {};');
    writeFileSync(join(dir, '_shared.js'), 'throw new Error("a helper, not a job");');
    const jobs = await loadJobs(pathToFileURL(dir + '/'), ['.js']);
    expect([...jobs.keys()]).toEqual(['nightly-report']);
    expect(jobs.get('nightly-report')).toMatchObject({ timeoutMs: 1000, overlap: 'skip', catchUp: 'latest' });
  });

  it('stops on a job file without a default job, naming the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookrun-jobs-'));
    writeFileSync(join(dir, 'broken.js'), 'export const run = () => {};\n');
    await expect(loadJobs(pathToFileURL(dir + '/'), ['.js'])).rejects.toThrow(
      /broken\.js: must `export default \{ run\(ctx\) \{ … \} \} satisfies EngineJobSpec`/,
    );
  });

  it('stops on a file name that cannot be a route', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookrun-jobs-'));
    writeFileSync(join(dir, 'Nightly_Report.js'), 'export default { run() {} };\n');
    await expect(loadJobs(pathToFileURL(dir + '/'), ['.js'])).rejects.toThrow(/Nightly_Report\.js: a job file name becomes its route/);
  });

  it('a bad policy is refused', () => {
    expect(() => resolveJob({ run() {}, overlap: 'queue' as never })).toThrow('overlap must be "skip", "allow" or "queue-one"');
    expect(() => resolveJob({ run() {}, timeoutMs: 0 })).toThrow('timeoutMs');
  });
});

describe('scheduler back-off', () => {
  it('doubles per consecutive failure up to the cap', () => {
    expect([1, 2, 3, 4, 11].map((n) => backoffMs(n, { baseMs: 1000, maxMs: 30_000 }))).toEqual([1000, 2000, 4000, 8000, 30_000]);
    expect([0, 0.5, 0.999].map((r) => backoffMs(3, { baseMs: 1000, maxMs: 30_000 }, () => r))).toEqual([2000, 3000, 3998]); // equal jitter: [d/2, d)
  });
});
