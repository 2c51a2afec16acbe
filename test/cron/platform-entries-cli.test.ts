import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { SECRETS } from '../helpers/config.js';
import { pollUntil, seedDataDir, spawnHookrun, type HookrunProcess, runCli } from '../helpers/spawn-hookrun.js';

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
    let flaky = 0;
    target = createServer((req, res) => {
      calls.push({ path: req.url!, authorization: req.headers.authorization, userAgent: req.headers['user-agent'] });
      if (req.url === '/flaky') return void res.writeHead(++flaky % 2 === 1 ? 500 : 204).end(); // every tick's first attempt fails
      if (req.url === '/slow') return void setTimeout(() => res.writeHead(204).end(), 2500);
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
    const check = await runCli(['check'], { PLATFORM_CONFIG: file });
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toMatch(/\/cron\/keep-alive {2}"0 9 \* \* \*" \(Europe\/Berlin\) {2}next: \d{4}-\d\d-\d\d 09:00 Europe\/Berlin \(0[78]:00Z\)/);
    const next = await runCli(['cron', 'next', 'keep-alive', '-n', '2'], { PLATFORM_CONFIG: file });
    expect(next.stdout).toMatch(
      /^keep-alive {2}"0 9 \* \* \*" \(Europe\/Berlin\)\n {2}\d{4}-\d\d-\d\d 09:00 Europe\/Berlin \(0[78]:00Z\)\n {2}\d{4}-\d\d-\d\d 09:00 Europe\/Berlin/,
    );
    const json = JSON.parse((await runCli(['cron', 'next', 'keep-alive', '-n', '1', '--json'], { PLATFORM_CONFIG: file })).stdout) as {
      timezone: string;
      nextRuns: string[];
    };
    expect(json.timezone).toBe('Europe/Berlin');
    expect(json.nextRuns[0]).toMatch(/T0[78]:00:00\.000Z$/);

    const bad = await runCli(['check'], { PLATFORM_CONFIG: platform([{ path: '/cron/keep-alive', schedule: '0 9 * * *', timezone: 'Europe/Berlim' }]) });
    expect(bad.code).toBe(78);
    expect(bad.stderr).toContain('crons[0].timezone "Europe/Berlim": not an IANA time zone');

    const plain = await runCli(['check'], {
      PLATFORM_CONFIG: platform([{ name: 'billing-sync', url: 'http://billing.example.com/sync', schedule: '0 9 * * *' }]),
    });
    expect(plain.code).toBe(78);
    expect(plain.stderr).toContain(
      'crons[0].url "http://billing.example.com/sync": plain http:// to another machine sends each call unencrypted. Use https://, or add "allowHttp": true',
    );

    const limited = await runCli(['check'], {
      PLATFORM_CONFIG: platform([
        { name: 'billing-sync', url: 'https://billing.example.com/sync', schedule: '0 9 * * *', rateLimit: { limit: 2, period: 'often' } },
      ]),
    });
    expect(limited.code).toBe(78);
    expect(limited.stderr).toContain(
      `crons[0]: rateLimit.period "often" is not a duration: write milliseconds (a number) or a number and a unit, like '500ms'`,
    );
  });

  it('cron pause, resume and backfill from the CLI (no server: the runs happen here)', async () => {
    const env = { PLATFORM_CONFIG: platform([{ path: '/cron/keep-alive', schedule: '0 * * * *' }]), DATA_DIR: join(dir, 'data') };
    const paused = await runCli(['cron', 'pause', 'keep-alive'], env);
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toContain('keep-alive paused: its scheduled ticks are skipped on every instance');
    const list = JSON.parse((await runCli(['cron', 'list', '--json'], env)).stdout) as Array<{ name: string; pausedAt: string | null }>;
    expect(list.find((j) => j.name === 'keep-alive')?.pausedAt).toMatch(/^\d{4}-/);
    expect((await runCli(['cron', 'resume', '/cron/keep-alive'], env)).stdout).toContain('keep-alive resumed.');
    expect((await runCli(['cron', 'resume', 'keep-alive'], env)).stdout).toContain('keep-alive was not paused.');

    const hour = 3_600_000;
    const from = new Date(Math.floor(Date.now() / hour) * hour - 3 * hour).toISOString();
    const to = new Date(Math.floor(Date.now() / hour) * hour - hour).toISOString();
    const dry = await runCli(['cron', 'backfill', 'keep-alive', '--from', from, '--to', to, '--dry-run'], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/keep-alive: 3 tick\(s\) from .*\n(.*would run\n){3}Nothing was run\. Without --dry-run, 3 tick\(s\) run, oldest first\./);
    const real = await runCli(['cron', 'backfill', 'keep-alive', '--from', from, '--to', to], env);
    expect(real.code, real.stderr).toBe(0);
    expect(real.stdout).toContain('Ran 3 tick(s) here: 3 succeeded, 0 did not.');
    const again = await runCli(['cron', 'backfill', 'keep-alive', '--from', from, '--to', to, '--json'], env);
    expect((JSON.parse(again.stdout) as { plan: { queued: number; ticks: Array<{ hasRun: boolean }> } }).plan).toMatchObject({
      queued: 0,
      ticks: [{ hasRun: true }, { hasRun: true }, { hasRun: true }],
    });
    // Paused, a backfill's ticks wait (not counted as failed) and run once resumed.
    const earlier = new Date(Date.parse(from) - 2 * hour).toISOString();
    expect((await runCli(['cron', 'pause', 'keep-alive'], env)).code).toBe(0);
    const held = await runCli(['cron', 'backfill', 'keep-alive', '--from', earlier, '--to', new Date(Date.parse(from) - hour).toISOString()], env);
    expect(held.code, held.stderr).toBe(0);
    expect(held.stdout).toContain('Ran 0 tick(s) here: 0 succeeded, 0 did not.\n2 tick(s) wait as pending (the job is paused');
    expect((await runCli(['cron', 'resume', 'keep-alive'], env)).code).toBe(0);
    const runsAfter = JSON.parse((await runCli(['cron', 'runs', 'keep-alive', '-n', '20', '--json'], env)).stdout) as Array<{ status: string }>;
    expect(runsAfter.filter((r) => r.status === 'pending')).toHaveLength(2); // still queued: a scheduler runs them
    const future = await runCli(['cron', 'backfill', 'keep-alive', '--from', from, '--to', '2999-01-01'], env);
    expect(future.code).toBe(2);
    expect(future.stderr).toContain('--to is in the future');
  });

  it('`hookrun start` calls HTTP targets on their schedule, each with its own token (never the cron secret), retrying and queueing by their policies', async () => {
    const file = platform([
      { name: 'pinger', url: `${targetUrl}/ping`, schedule: '* * * * * *', tokenEnv: 'PINGER_CRON_TOKEN' },
      { name: 'flaky', url: `${targetUrl}/flaky`, schedule: '*/5 * * * * *', retries: { attempts: 2, delayMs: 300 } },
      { name: 'slow', url: `${targetUrl}/slow`, schedule: '* * * * * *', overlap: 'queue-one' },
    ]);
    server = await spawnHookrun({ dataDir: join(dir, 'data'), env: { PLATFORM_CONFIG: file, PINGER_CRON_TOKEN: 'pinger-target-token' } });
    const auth = { headers: { authorization: `Bearer ${SECRETS.admin}` } };
    type Run = {
      job: string;
      status: string;
      attempt: number;
      scheduledFor: string | null;
      dueAt: string | null;
      retryOf: number | null;
      error: string | null;
    };
    const runsOf = async (job: string) => ((await (await fetch(`${server!.url}/api/cron/runs?job=${job}&limit=200`, auth)).json()) as { runs: Run[] }).runs;
    await pollUntil('two ticks of the pinger', 10_000, async () => (calls.filter((c) => c.path === '/ping').length >= 2 ? true : undefined));
    expect(calls[0]).toEqual({ path: '/ping', authorization: 'Bearer pinger-target-token', userAgent: expect.stringMatching(/^hookrun-cron\//) });
    expect(calls.some((c) => c.authorization?.includes(SECRETS.cron))).toBe(false);
    // flaky: each tick fails once (500) and its retry, 300 ms later, succeeds
    const retried = await pollUntil('a retried tick', 15_000, async () => (await runsOf('flaky')).find((r) => r.attempt === 2 && r.status === 'succeeded'));
    const first = (await runsOf('flaky')).find((r) => r.attempt === 1 && r.scheduledFor === retried.scheduledFor);
    expect(first).toMatchObject({ status: 'failed', error: expect.stringContaining('answered 500') });
    // slow (2.5 s a call, every second, queue-one): ticks during a call wait and run right after it; later ones are skipped
    const queued = await pollUntil('a queued tick that ran', 15_000, async () =>
      (await runsOf('slow')).find((r) => r.dueAt !== null && r.status === 'succeeded'),
    );
    expect(queued.attempt).toBe(1);
    expect((await runsOf('slow')).some((r) => r.status === 'skipped' && /already waits behind it/.test(r.error ?? ''))).toBe(true);
    const jobs = (await (await fetch(`${server.url}/api/cron/jobs`, auth)).json()) as {
      jobs: Array<{ name: string; attempts: number; lastRun: { status: string } | null }>;
    };
    expect(jobs.jobs.find((j) => j.name === 'pinger')?.lastRun?.status).toMatch(/succeeded|running/);
    expect(jobs.jobs.find((j) => j.name === 'flaky')?.attempts).toBe(2);
  });
});
