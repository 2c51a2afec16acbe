import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { SECRETS } from '../helpers/config.js';
import { REPO_ROOT, baseEnv, pollUntil, seedDataDir, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';

function hookrun(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(REPO_ROOT, 'dist', 'main.js'), ...args], { cwd: REPO_ROOT, env: { ...baseEnv(), ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

describe('platform.json with a time zone and an HTTP target (spawned hookrun)', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-platform-'));
  const calls: Array<{ path: string; authorization?: string; userAgent?: string }> = [];
  let target: Server;
  let targetUrl: string;
  let server: HookrunProcess | undefined;
  const platform = (crons: unknown[]) => {
    const file = join(dir, `platform-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify({ crons }));
    return file;
  };

  beforeAll(async () => {
    target = createServer((req, res) => {
      calls.push({ path: req.url!, authorization: req.headers.authorization, userAgent: req.headers['user-agent'] });
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
    await Promise.all([ensureDistBuilt(), seedDataDir(join(dir, 'data'))]);
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    target.closeAllConnections();
    target.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('check and cron next show each tick in the job zone and in UTC; an unknown zone is exit 78 naming the entry', async () => {
    const file = platform([{ path: '/cron/keep-alive', schedule: '0 9 * * *', timezone: 'Europe/Berlin' }]);
    const check = await hookrun(['check'], { PLATFORM_CONFIG: file });
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toMatch(/\/cron\/keep-alive {2}"0 9 \* \* \*" \(Europe\/Berlin\) {2}next: \d{4}-\d\d-\d\d 09:00 Europe\/Berlin \(0[78]:00Z\)/);
    const next = await hookrun(['cron', 'next', 'keep-alive', '-n', '2'], { PLATFORM_CONFIG: file });
    expect(next.stdout).toMatch(/^keep-alive {2}"0 9 \* \* \*" \(Europe\/Berlin\)\n {2}\d{4}-\d\d-\d\d 09:00 Europe\/Berlin \(0[78]:00Z\)\n {2}\d{4}-\d\d-\d\d 09:00 Europe\/Berlin/);
    const json = JSON.parse((await hookrun(['cron', 'next', 'keep-alive', '-n', '1', '--json'], { PLATFORM_CONFIG: file })).stdout) as { timezone: string; nextRuns: string[] };
    expect(json.timezone).toBe('Europe/Berlin');
    expect(json.nextRuns[0]).toMatch(/T0[78]:00:00\.000Z$/);

    const bad = await hookrun(['check'], { PLATFORM_CONFIG: platform([{ path: '/cron/keep-alive', schedule: '0 9 * * *', timezone: 'Europe/Berlim' }]) });
    expect(bad.code).toBe(78);
    expect(bad.stderr).toContain('crons[0].timezone "Europe/Berlim": not an IANA time zone');
  });

  it('`hookrun start` calls an HTTP target on its schedule, with the cron secret', async () => {
    const file = platform([{ name: 'pinger', url: `${targetUrl}/ping`, schedule: '* * * * * *' }]);
    server = await spawnHookrun({ dataDir: join(dir, 'data'), env: { PLATFORM_CONFIG: file } });
    await pollUntil('two ticks of the HTTP target', 10_000, async () => (calls.length >= 2 ? true : undefined));
    expect(calls[0]).toEqual({ path: '/ping', authorization: `Bearer ${SECRETS.cron}`, userAgent: expect.stringMatching(/^hookrun-cron\//) });
    const jobs = (await (await fetch(`${server.url}/api/cron/jobs`, { headers: { authorization: `Bearer ${SECRETS.admin}` } })).json()) as { jobs: Array<{ name: string; lastRun: { status: string } | null }> };
    expect(jobs.jobs.find((j) => j.name === 'pinger')?.lastRun?.status).toMatch(/succeeded|running/);
  });
});
