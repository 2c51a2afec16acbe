import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { runCliInProcess, type CliResult } from '../helpers/cli.js';
import { SECRETS } from '../helpers/config.js';
import { ADMIN_TOKENS, OPERATORS } from '../audit/operators-app.js';
import { PACKAGE_VERSION } from '../helpers/package-version.js';
import { assertNoSecretLeaks, recordCapture } from '../helpers/secret-scan.js';
import { REPO_ROOT, TEST_NODE_FLAGS, baseEnv, pollUntil, seedDataDir, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';

/** Run `hookrun <args>` in-process (helpers/cli.ts) with the test env plus `env`, from the repository root. */
function hookrun(args: string[], env: Record<string, string | undefined>): Promise<CliResult> {
  return runCliInProcess(args, { ...baseEnv(), ...env }, REPO_ROOT);
}

/** Run `node dist/main.js <args>` to completion (bounded), stdout and stderr apart: the bin itself, end to end. */
function spawned(args: string[], env: Record<string, string | undefined>): Promise<CliResult> {
  const merged: Record<string, string> = { ...baseEnv() };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete merged[name];
    else merged[name] = value;
  }
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...TEST_NODE_FLAGS, join(REPO_ROOT, 'dist', 'main.js'), ...args],
      { cwd: REPO_ROOT, env: merged, timeout: 60_000 },
      (error, stdout, stderr) => {
        recordCapture(`hookrun ${args.join(' ')}`, stdout + stderr);
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('hookrun CLI (in-process; --version, usage and help through the spawned bin)', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-cli-'));
  const dataDir = join(dir, 'data');
  let server: HookrunProcess | undefined;
  let env: Record<string, string>;

  beforeAll(async () => {
    await ensureDistBuilt();
    await seedDataDir(dataDir);
    env = { DATA_DIR: dataDir, PLATFORM_CONFIG: join(REPO_ROOT, 'platform.json'), LOG_LEVEL: 'warn' };
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
    assertNoSecretLeaks();
  });

  it('check: 0 with each cron and its next 3 UTC runs; 78 naming a bad platform.json entry', async () => {
    const ok = await hookrun(['check', '--json'], env);
    expect(ok.code, ok.stderr).toBe(0);
    const report = JSON.parse(ok.stdout) as { crons: Array<{ path: string; schedule: string; nextRuns: string[] }> };
    const keepAlive = report.crons.find((c) => c.path === '/cron/keep-alive')!;
    expect(keepAlive.schedule).toBe('0 1 * * *');
    expect(keepAlive.nextRuns).toHaveLength(3);
    for (const run of keepAlive.nextRuns) expect(run).toMatch(/T01:00:00\.000Z$/);
    expect(report).toMatchObject({ changes: null });

    const capturing = await hookrun(['check'], {
      ...env,
      CHANGES_DATABASE_URL: 'postgres://capture:pw-not-shown@db.example:5432/shop',
      CHANGES_SLOT: 'shop_slot',
    });
    expect(capturing.stdout).toContain('changes      capturing postgres://capture:***@db.example:5432/shop: publication hookrun_changes, slot shop_slot');
    expect(capturing.stdout).not.toContain('pw-not-shown');
    const badSlot = await hookrun(['check'], { ...env, CHANGES_DATABASE_URL: 'postgres://db.example/shop', CHANGES_SLOT: 'Bad-Slot' });
    expect(badSlot.code).toBe(78);
    expect(badSlot.stderr).toMatch(/CHANGES_SLOT="Bad-Slot" is not a valid slot name/);

    const bad = join(dir, 'bad-platform.json');
    writeFileSync(bad, JSON.stringify({ crons: [{ path: '/cron/keep-alive', schedule: '61 * * * *' }] }));
    const refused = await hookrun(['check'], { ...env, PLATFORM_CONFIG: bad });
    expect(refused.code).toBe(78);
    expect(refused.stderr).toMatch(/crons\[0\]\.schedule "61 \* \* \* \*": minute must be 0-59/);
  });

  it("--project given twice: the last wins (`npm start -- --project other` after the script's --project examples)", async () => {
    const other = join(dir, 'other-project');
    mkdirSync(join(other, 'jobs'), { recursive: true });
    writeFileSync(join(other, 'platform.json'), JSON.stringify({ crons: [] }));
    const projectEnv = { DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
    const report = async (args: string[]) => {
      const result = await hookrun(args, projectEnv);
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout) as { platformConfig: string; jobs: string[] };
    };
    const last = await report(['--project', 'examples', 'check', '--json', '--project', other]);
    expect(last.platformConfig).toContain('other-project');
    expect(last.jobs).not.toContain('hourly-digest');
    const back = await report(['check', '--project', other, '--json', '--project=examples']);
    expect(back.platformConfig).toBe('examples/platform.json');
    expect(back.jobs).toContain('hourly-digest');
  });

  it('runs a job in-process (trigger cli) and lists events with no server running', async () => {
    const run = await hookrun(['cron', 'run', 'keep-alive', '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ job: 'keep-alive', trigger: 'cli', status: 'succeeded' });
    const list = await hookrun(['events', 'list', '--json'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual({ events: [], nextCursor: null });
  });

  it('handlers pause, list and resume with no server running; an unknown name is exit 1 naming the handlers', async () => {
    const paused = await hookrun(['handlers', 'pause', 'stripe-mirror'], env);
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toContain('stripe-mirror paused: its deliveries wait on every instance');
    const list = JSON.parse((await hookrun(['handlers', 'list', '--json'], env)).stdout) as Array<{ name: string; paused: boolean; flow: string | null }>;
    expect(list.find((h) => h.name === 'stripe-mirror')).toMatchObject({ paused: true, flow: null });
    expect((await hookrun(['handlers', 'list'], env)).stdout).toMatch(/^stripe-mirror\s+—\s+since \d{4}-/m);
    expect((await hookrun(['handlers', 'resume', 'stripe-mirror'], env)).stdout).toContain('stripe-mirror resumed');
    const unknown = await hookrun(['handlers', 'pause', 'stripe-miror'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^hookrun: No handler "stripe-miror"\. Did you mean "stripe-mirror"\? Handlers: .*stripe-mirror/);
  });

  it('send: posts a signed sample the running server accepts; events and cron go through its admin API', async () => {
    server = await spawnHookrun({ dataDir, env: { PLATFORM_CONFIG: env.PLATFORM_CONFIG, SCHEDULER: 'off', ADMIN_TOKENS } });
    const port = new URL(server.url).port;
    const remote = { ...env, PORT: port };

    const sent = await hookrun(['send', 'auth', 'user.created', '--json'], remote);
    expect(sent.code, sent.stderr).toBe(0);
    const answer = JSON.parse(sent.stdout) as { status: number; answer: { id: number }; event: { data: { id: string } } };
    expect(answer.status).toBe(200);

    const list = await hookrun(['events', 'list', '--source', 'auth', '--json'], remote);
    expect(list.code, list.stderr).toBe(0);
    const { events } = JSON.parse(list.stdout) as { events: Array<{ id: number; type: string }> };
    expect(events.map((e) => e.id)).toContain(answer.answer.id);

    const table = await hookrun(['events', 'list'], remote);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^ID\s+RECEIVED \(UTC\)\s+SOURCE\s+TYPE\s+STATUS/);
    expect(table.stdout).toContain('user.created');

    const show = await hookrun(['events', 'show', String(answer.answer.id)], remote);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(answer.event.data.id);

    const replay = await hookrun(['events', 'replay', String(answer.answer.id)], remote);
    expect(replay.code, replay.stderr).toBe(0);

    await pollUntil('the sent user in the users mirror', 20_000, async () => {
      const mirror = await hookrun(['mirror', 'users', '--search', answer.event.data.id, '--json'], remote);
      return (JSON.parse(mirror.stdout) as { rows: unknown[] }).rows.length === 1 ? true : undefined;
    });
    const users = await hookrun(['mirror', 'users'], remote);
    expect(users.stdout).toMatch(/^ID\s+EMAIL\s+FIRST_NAME/);
    expect(users.stdout).toContain(answer.event.data.id);

    const cron = await hookrun(['cron', 'list', '--json'], remote);
    expect(cron.code, cron.stderr).toBe(0);
    const jobs = JSON.parse(cron.stdout) as Array<{ name: string; nextRuns: string[]; lastRun: { trigger: string } | null }>;
    expect(jobs.find((j) => j.name === 'keep-alive')).toMatchObject({ lastRun: { trigger: 'cli' } });
    const handlers = await hookrun(['handlers', 'list', '--json'], remote); // the server's own registry
    expect(handlers.code, handlers.stderr).toBe(0);
    expect((JSON.parse(handlers.stdout) as Array<{ name: string }>).map((h) => h.name)).toContain('clerk-mirror');

    const noToken = await hookrun(['events', 'list'], { ...remote, ADMIN_TOKEN: undefined });
    expect(noToken.code).toBe(78);
    expect(noToken.stderr).toMatch(/hookrun is running on DATA_DIR .* \(pid \d+\).*ADMIN_TOKEN/);

    // A named token through the server's admin API: a viewer reads, is refused an action, and the audit names both.
    const asBob = { ...remote, ADMIN_TOKEN: undefined, HOOKRUN_ADMIN_TOKEN: OPERATORS.bob };
    expect((await hookrun(['events', 'list'], asBob)).code).toBe(0);
    const refused = await hookrun(['events', 'replay', String(answer.answer.id)], asBob);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('bob signs in as a viewer, who reads but may not act: event.replay needs the operator role');
    const audit = await fetch(`${server.url}/api/audit`, { headers: { authorization: `Bearer ${OPERATORS.bob}` } });
    const { entries } = (await audit.json()) as { entries: Array<{ operator: string; via: string; action: string; outcome: string }> };
    expect(entries.map((e) => `${e.operator} ${e.via} ${e.action} ${e.outcome}`)).toEqual(
      expect.arrayContaining(['admin cli event.replay ok', 'bob cli event.replay refused']),
    );
  });

  it('send --curl prints a command that, pasted into a fresh shell, is accepted by the server (signed bytes, bearer from the env)', async () => {
    const port = new URL(server!.url).port;
    for (const [source, type] of [
      ['payments', 'invoice.paid'],
      ['auth', 'user.created'],
      ['database', 'INSERT'],
    ]) {
      const printed = await hookrun(['send', source!, type!, '--curl', '--data', `{"note":"it's ${source}"}`], { ...env, PORT: port });
      expect(printed.code, printed.stderr).toBe(0);
      expect(printed.stdout).not.toContain(SECRETS.database);
      const pasted = await new Promise<string>((resolve) =>
        execFile(
          'bash',
          ['-c', printed.stdout],
          { cwd: dir, env: { PATH: process.env.PATH, DATABASE_WEBHOOK_SECRET: SECRETS.database }, timeout: 30_000 },
          (_e, stdout) => resolve(stdout),
        ),
      );
      expect(pasted, `${source}: ${printed.stdout}`).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*"duplicate":false/);
    }
  });

  it("send --story: one customer's life, linked by id, ends in the mirrors as one user, one customer and one active subscription", async () => {
    const remote = { ...env, PORT: new URL(server!.url).port };
    const story = await hookrun(['send', '--story'], remote);
    expect(story.code, story.stderr).toBe(0);
    expect(story.stdout.match(/^200 /gm)).toHaveLength(4);
    await pollUntil('the story in the mirrors', 20_000, async () => {
      const customers = JSON.parse((await hookrun(['mirror', 'customers', '--search', 'cus_story_', '--json'], remote)).stdout) as {
        rows: Array<{ id: string; user_id: string | null }>;
      };
      const subscriptions = JSON.parse((await hookrun(['mirror', 'subscriptions', '--search', 'cus_story_', '--json'], remote)).stdout) as {
        rows: Array<{ customer_id: string; status: string }>;
      };
      const customer = customers.rows[0];
      if (!customer?.user_id?.startsWith('user_story_') || subscriptions.rows[0]?.status !== 'active') return undefined;
      expect(customer.id.slice('cus_story_'.length)).toBe(customer.user_id.slice('user_story_'.length));
      return true;
    });
    expect((await hookrun(['send', '--story', 'auth'], remote)).code).toBe(2);
  });

  it('--version; a usage error is one line and a hint, not the whole help; --data takes inline JSON; empty listings say what matched', async () => {
    const version = await spawned(['--version'], env);
    expect([version.code, version.stdout.trim()]).toEqual([0, PACKAGE_VERSION]);
    const usage = await spawned(['send', 'auth'], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr.trim().split('\n')).toEqual([
      'Give a source and a type, e.g. hookrun send auth user.created (or --story).',
      '(hookrun <command> --help shows how to use it)',
    ]);
    const inline = await spawned(['send', 'auth', 'user.created', '--dry-run', '--json', '--data', '{"data":{"id":"user_inline"}}'], env);
    expect(inline.code, inline.stderr).toBe(0);
    expect(JSON.parse(JSON.parse(inline.stdout).body).data.id).toBe('user_inline'); // body: the exact signed string
    const broken = await spawned(['send', 'auth', 'user.created', '--dry-run', '--data', '{"data":'], env);
    expect([broken.code, broken.stderr]).toEqual([2, expect.stringContaining('--data (inline JSON): is not valid JSON')]);
    const next = await spawned(['cron', 'next', '/cron/keep-alive', '-n', '1', '--json'], env); // the name `cron list` prints
    expect([next.code, JSON.parse(next.stdout || '{}').job], next.stderr).toEqual([0, 'keep-alive']);
    const empty = await spawned(['events', 'list', '--status', 'dead', '--source', 'auth'], { ...env, PORT: server ? new URL(server.url).port : '3002' });
    expect(empty.stdout.trim()).toBe('No events with status dead, source auth.');
  });

  it('help lists every command group; a command loads its own group only; a mistyped command is told the right one', async () => {
    const help = await spawned(['--help'], env);
    expect(help.code).toBe(0);
    for (const command of [
      'start',
      'worker',
      'dev',
      'migrate',
      'check',
      'send',
      'cron',
      'events',
      'handlers',
      'reconcile',
      'prune',
      'alert',
      'mirror',
      'listen',
      'changes',
    ]) {
      expect(help.stdout).toMatch(new RegExp(`^\\s+${command}\\b`, 'm'));
    }
    const startHelp = await spawned(['start', '--help'], env);
    expect(startHelp.code).toBe(0);
    expect(startHelp.stdout).toContain('--no-scheduler');
    const pull = await spawned(['events', 'pull', '--help'], env); // registered by the events group
    expect(pull.code).toBe(0);
    const typo = await spawned(['strat'], env);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('start');
  });

  it('exit codes: 1 when the server answers non-2xx or nothing answers, 2 for usage', async () => {
    const port = server ? new URL(server.url).port : '9';
    const refused = await hookrun(['send', 'auth', 'user.created'], {
      ...env,
      PORT: port,
      AUTH_WEBHOOK_SECRET: 'whsec_' + Buffer.from('a-different-secret-of-32-bytes!!').toString('base64'),
    });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/^400 .*invalid_signature/m);
    const nobody = await hookrun(['send', 'payments', 'invoice.paid', '--url', 'http://127.0.0.1:9'], env);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toMatch(/nothing answered at http:\/\/127\.0\.0\.1:9\/webhooks\/payments/);
    expect((await hookrun(['send', 'auth', 'no.such.type'], env)).code).toBe(2);
    expect((await hookrun(['send', 'mail', 'user.created'], env)).code).toBe(2);
  });
});
