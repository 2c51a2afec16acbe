import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { SECRETS } from '../helpers/config.js';
import { FakeClerkApi, TEST_CLERK_KEY } from '../helpers/fake-clerk-api.js';
import { FakeGithubApi, TEST_GITHUB_TOKEN } from '../helpers/fake-github-api.js';
import { scanCapturedForSecrets } from '../helpers/secret-scan.js';
import { pollUntil, runCli, seedDataDir, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';

const HOUR = 3_600_000;

describe('hookrun reconcile github|clerk|paddle (spawned, embedded database)', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-reconcile-senders-'));
  const clerk = new FakeClerkApi();
  const github = new FakeGithubApi('/repos/acme/shop/hooks/42', SECRETS.github);
  let env: Record<string, string>;
  let server: HookrunProcess | undefined;

  beforeAll(async () => {
    await ensureDistBuilt();
    await seedDataDir(join(dir, 'data'));
    for (let i = 0; i < 3; i++) {
      const at = Date.now() - (i + 1) * HOUR;
      clerk.users.push({ id: `user_cli${i}`, first_name: 'Ada', email_addresses: [], updated_at: at });
      github.add(`guid-cli-${i}`, new Date(at), 'issues', { action: 'opened', issue: { number: i }, repository: { full_name: 'acme/shop' } }, 502);
    }
    env = {
      DATA_DIR: join(dir, 'data'),
      LOG_LEVEL: 'warn',
      SCHEDULER: 'off',
      CLERK_SECRET_KEY: TEST_CLERK_KEY,
      CLERK_API_BASE: await clerk.start(),
      GITHUB_TOKEN: TEST_GITHUB_TOKEN,
      GITHUB_HOOK: 'acme/shop/42',
      GITHUB_API_BASE: await github.start(),
      PAYMENTS_PROVIDER: 'paddle',
    };
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await clerk.close();
    await github.close();
    rmSync(dir, { recursive: true, force: true });
    expect(scanCapturedForSecrets([...Object.values(SECRETS), TEST_CLERK_KEY, TEST_GITHUB_TOKEN]).hits).toEqual([]);
  });

  it('with no server: stores what Clerk lists, once; a provider refusal exits 1 with its message; usage and config errors exit 2 and 78', async () => {
    const first = await runCli(['reconcile', 'clerk', '--since', '3d', '--json'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ found: 3, added: 3, alreadyStored: 0 });
    const again = await runCli(['reconcile', 'clerk', '--since', '3d'], env);
    expect(again.stdout).toMatch(/^Clerk users and organizations since .*: 3 found, 0 new .*, 3 already stored\./);
    const refused = await runCli(['reconcile', 'clerk', '--since', '3d'], { ...env, CLERK_SECRET_KEY: 'sk_test_wrong' });
    expect([refused.code, refused.stderr]).toEqual([
      1,
      expect.stringMatching(/Clerk API answered 401.*The provided Clerk Secret Key is invalid[\s\S]*Run it again once the API answers/),
    ]);
    expect((await runCli(['reconcile', 'github', '--since', '4d'], env)).stderr).toMatch(/GitHub redelivers a webhook delivery only within 3 days/);
    expect((await runCli(['reconcile', 'github', '--since', '4d'], env)).code).toBe(2);
    const unconfigured = await runCli(['reconcile', 'paddle', '--since', '3d'], env);
    expect([unconfigured.code, unconfigured.stderr]).toEqual([78, expect.stringMatching(/PADDLE_API_KEY is not set/)]);
  });

  it('while hookrun start holds DATA_DIR: github goes through its admin API, GitHub redelivers to it, and the deliveries are stored', async () => {
    server = await spawnHookrun({ dataDir: env.DATA_DIR, env: { ...env, LOG_LEVEL: 'info' } });
    github.target = `${server.url}/webhooks/github`;
    const remote = { ...env, PORT: new URL(server.url).port };
    const run = await runCli(['reconcile', 'github', '--since', '3d'], remote);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/GitHub deliveries since .*: 3 found, 3 missing \(GitHub was asked to redeliver them.*\), 0 already stored\./);
    await pollUntil('the redelivered deliveries stored', 20_000, async () => {
      const list = await runCli(['events', 'list', '--source', 'github', '--json'], remote);
      return (JSON.parse(list.stdout) as { events: unknown[] }).events.length === 3 ? true : undefined;
    });
    const again = await runCli(['reconcile', 'github', '--since', '3d', '--json'], remote);
    expect(JSON.parse(again.stdout)).toMatchObject({ found: 3, added: 0, alreadyStored: 3 });
  });
});
