import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stripeEvent, stripeSubscription } from '../inbox/fixtures.js';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { FakeStripeApi, TEST_STRIPE_KEY } from '../helpers/fake-stripe-api.js';
import { assertNoSecretLeaks } from '../helpers/secret-scan.js';
import { pollUntil, seedDataDir, spawnHookrun, type HookrunProcess, runCli } from '../helpers/spawn-hookrun.js';

describe('hookrun reconcile payments (spawned, embedded database)', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-reconcile-'));
  const api = new FakeStripeApi();
  let env: Record<string, string>;
  let server: HookrunProcess | undefined;

  beforeAll(async () => {
    await ensureDistBuilt();
    await seedDataDir(join(dir, 'data'));
    const now = Math.floor(Date.now() / 1000);
    for (let i = 0; i < 3; i++)
      api.events.push({
        ...stripeEvent('customer.subscription.created', now - 3600 * (i + 1), stripeSubscription(`sub_cli${i}`, 'active')),
        id: `evt_cli${i}`,
      });
    env = { DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'warn', SCHEDULER: 'off', STRIPE_SECRET_KEY: TEST_STRIPE_KEY, STRIPE_API_BASE: await api.start() };
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
    assertNoSecretLeaks();
  });

  it('with no server: opens DATA_DIR itself and stores the missing events; usage and config errors exit 2 and 78', async () => {
    const first = await runCli(['reconcile', 'payments', '--since', '3d', '--json'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ found: 3, added: 3, alreadyStored: 0, addedIds: ['evt_cli2', 'evt_cli1', 'evt_cli0'] });
    expect((await runCli(['reconcile', 'payments', '--since', 'soon'], env)).code).toBe(2);
    expect((await runCli(['reconcile', 'auth', '--since', '3d'], env)).code).toBe(2);
    const { STRIPE_SECRET_KEY: _key, STRIPE_API_BASE: _base, ...noKey } = env;
    const unconfigured = await runCli(['reconcile', 'payments', '--since', '3d'], noKey);
    expect(unconfigured.code).toBe(78);
    expect(unconfigured.stderr).toMatch(/STRIPE_SECRET_KEY is not set/);
  });

  it('while hookrun start holds DATA_DIR: goes through its admin API, adds nothing twice, and the worker processes what it added', async () => {
    const now = Math.floor(Date.now() / 1000);
    api.events.push({ ...stripeEvent('customer.subscription.updated', now - 60, stripeSubscription('sub_cli9', 'past_due')), id: 'evt_cli9' });
    server = await spawnHookrun({ dataDir: env.DATA_DIR, env: { ...env, LOG_LEVEL: 'info' } });
    const remote = { ...env, PORT: new URL(server.url).port };
    const run = await runCli(['reconcile', 'payments', '--since', '3d'], remote);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/4 found, 1 new .*, 3 already stored/);
    expect(run.stdout).toContain('+ evt_cli9');
    await pollUntil('the recovered events processed', 20_000, async () => {
      const list = await runCli(['events', 'list', '--status', 'processed', '--json'], remote);
      const { events } = JSON.parse(list.stdout) as { events: unknown[] };
      return events.length === 4 ? true : undefined;
    });
    // Once the worker is done with them (its API fetches and fsynced commits no longer hold the embedded database's one session).
    const again = await runCli(['reconcile', 'payments', '--since', '3d', '--json'], remote);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ found: 4, added: 0, alreadyStored: 4 });
  });
});
