import { describe, expect, it } from 'vitest';
import { parseSchedule, type ScheduledJob } from '../../src/cron/schedule.js';
import { mergeVercelJson, mountedPath, vercelEntries } from '../../src/cron/vercel-config.js';

const job = (name: string, expression: string, timezone?: string): ScheduledJob =>
  ({ job: name, schedule: parseSchedule(expression, timezone) }) as ScheduledJob;
const options = { basePath: '/api', drainSchedule: '* * * * *', schedules: false };

describe('hookrun vercel: platform.json schedules as vercel.json entries', () => {
  it('writes one cron per scheduled job under the mount, and the drain every minute', () => {
    expect(vercelEntries([job('nightly', '0 3 * * *'), job('digest', '0 * * * *')], options)).toEqual({
      crons: [
        { path: '/api/cron/nightly', schedule: '0 3 * * *' },
        { path: '/api/cron/digest', schedule: '0 * * * *' },
        { path: '/api/cron/hookrun-drain', schedule: '* * * * *' },
      ],
    });
  });

  it('mounts under any base path, with exactly one slash between', () => {
    expect(['/api', '/api/', 'api', '/', ''].map((base) => mountedPath(base, 'x'))).toEqual([
      '/api/cron/x',
      '/api/cron/x',
      '/api/cron/x',
      '/cron/x',
      '/cron/x',
    ]);
  });

  it('refuses a job with a time zone for Cron Jobs (UTC only), and writes it as a Schedule with its zone under --schedules', () => {
    const zoned = [job('report', '0 9 * * 1-5', 'Europe/Berlin')];
    expect(() => vercelEntries(zoned, options)).toThrow('Vercel Cron Jobs run in UTC only, and report runs in Europe/Berlin: run `hookrun vercel --schedules`');
    expect(vercelEntries(zoned, { ...options, schedules: true })).toEqual({
      schedules: {
        report: { schedule: '0 9 * * 1-5', path: '/api/cron/report', timezone: 'Europe/Berlin', requestMethod: 'GET' },
        'hookrun-drain': { schedule: '* * * * *', path: '/api/cron/hookrun-drain', requestMethod: 'GET' },
      },
    });
  });

  it('refuses what Vercel would refuse, and a job that would hide the drain route', () => {
    expect(() => vercelEntries([job('weekly', '0 3 * * SUN')], options)).toThrow('Vercel would refuse these schedules: weekly "0 3 * * SUN"');
    expect(() => vercelEntries([], { ...options, drainSchedule: '@hourly' })).toThrow('hookrun-drain "@hourly"');
    expect(() => vercelEntries([job('hookrun-drain', '0 3 * * *')], options)).toThrow('would hide hookrun');
  });

  it('replaces only the entries it wrote before, keeping the rest of vercel.json', () => {
    const existing = {
      framework: 'nextjs',
      crons: [
        { path: '/api/cron/old-job', schedule: '0 1 * * *' },
        { path: '/api/own-route', schedule: '0 2 * * *' },
      ],
    };
    const merged = mergeVercelJson(existing, vercelEntries([job('nightly', '0 3 * * *')], options), '/api');
    expect(merged).toEqual({
      framework: 'nextjs',
      crons: [
        { path: '/api/own-route', schedule: '0 2 * * *' },
        { path: '/api/cron/nightly', schedule: '0 3 * * *' },
        { path: '/api/cron/hookrun-drain', schedule: '* * * * *' },
      ],
    });
    const asSchedules = mergeVercelJson(merged, vercelEntries([job('nightly', '0 3 * * *')], { ...options, schedules: true }), '/api');
    expect(asSchedules.crons).toEqual([{ path: '/api/own-route', schedule: '0 2 * * *' }]);
    expect(Object.keys(asSchedules.schedules as object)).toEqual(['nightly', 'hookrun-drain']);
  });
});
