import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { runCli } from '../helpers/spawn-hookrun.js';
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

describe('hookrun vercel (the command)', { timeout: 120_000 }, () => {
  it('updates vercel.json in place from the project, keeping its other keys; a zoned job is refused (exit 78) and the file left as it was', async () => {
    await ensureDistBuilt();
    const dir = mkdtempSync(join(tmpdir(), 'hookrun-vercel-'));
    try {
      mkdirSync(join(dir, 'jobs'));
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'the-product', type: 'module' }));
      writeFileSync(join(dir, 'jobs', 'nightly.ts'), 'export default { run() {} };\n');
      writeFileSync(join(dir, 'platform.json'), JSON.stringify({ crons: [{ path: '/cron/nightly', schedule: '0 3 * * *' }] }));
      const vercelJson = join(dir, 'vercel.json');
      writeFileSync(vercelJson, JSON.stringify({ framework: 'nextjs' }));
      const written = await runCli(['vercel', '--project', dir, '--file', vercelJson, '--base-path', '/api/hookrun']);
      expect(written.code, written.stderr).toBe(0);
      expect(JSON.parse(readFileSync(vercelJson, 'utf8'))).toEqual({
        framework: 'nextjs',
        crons: [
          { path: '/api/hookrun/cron/nightly', schedule: '0 3 * * *' },
          { path: '/api/hookrun/cron/hookrun-drain', schedule: '* * * * *' },
        ],
      });
      writeFileSync(join(dir, 'platform.json'), JSON.stringify({ crons: [{ path: '/cron/nightly', schedule: '0 3 * * *', timezone: 'Europe/Paris' }] }));
      const before = readFileSync(vercelJson, 'utf8');
      const refused = await runCli(['vercel', '--project', dir, '--file', vercelJson]);
      expect(refused.code).toBe(78);
      expect(refused.stderr).toContain('nightly runs in Europe/Paris: run `hookrun vercel --schedules`');
      expect(readFileSync(vercelJson, 'utf8')).toBe(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
