import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SECRETS } from '../helpers/config.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { reportFigures } from '../helpers/figures.js';
import { assertNoSecretLeaks } from '../helpers/secret-scan.js';
import { checkoutCompleted, clerkUserCreated, sendDelivery, stripeDelivery, supabaseInsert, type Delivery } from '../helpers/signed-deliveries.js';
import { REPO_ROOT, baseEnv, pollUntil, seedDataDir, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

/** The laptop's own secrets: nothing of the deployed hookrun's. */
const LAPTOP = {
  PAYMENTS_WEBHOOK_SECRET: 'whsec_laptop_payments_secret',
  AUTH_WEBHOOK_SECRET: 'whsec_' + Buffer.from('laptop-auth-secret-32-bytes-long').toString('base64'),
  DATABASE_WEBHOOK_SECRET: 'laptop-database-bearer-secret-32-chars',
  ADMIN_TOKEN: 'laptop-admin-token-for-tests-32-chars',
};

interface Row {
  id: number;
  source: string;
  key: string;
  type: string;
  status: string;
}

async function events(base: string, token: string, query = ''): Promise<Row[]> {
  const res = await fetch(`${base}/api/events?limit=200${query}`, { headers: { authorization: `Bearer ${token}` } });
  return ((await res.json()) as { events: Row[] }).events;
}

const stripeId = (d: Delivery) => (JSON.parse(d.body) as { id: string }).id;

function hookrunCli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [join(REPO_ROOT, 'dist', 'main.js'), ...args],
      { cwd: REPO_ROOT, env: { ...baseEnv(), ...env }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    ),
  );
}

// Real events of a deployed hookrun, on a laptop: `hookrun listen` and `hookrun events pull`.
describe.skipIf(!process.env.TEST_DATABASE_URL)('listen and pull: deployed (PostgreSQL) → laptop (embedded), re-signed locally', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-relay-'));
  let database: TestDatabase;
  let deployed: HookrunProcess;
  let laptop: HookrunProcess;
  let proxy: TcpProxy;
  let listener: HookrunProcess | undefined;

  afterAll(async () => {
    await listener?.stop(5_000);
    await Promise.all([deployed?.stop(10_000), laptop?.stop(10_000)]);
    await proxy?.close();
    await database?.close();
    rmSync(dir, { recursive: true, force: true });
    assertNoSecretLeaks();
  });

  it(
    'streams each new event to the laptop under the same key, processed by local handlers; a cut stream resumes with nothing missed; Ctrl-C stops',
    { timeout: 120_000 },
    async () => {
      database = await createPostgresDatabase();
      await seedDataDir(join(dir, 'laptop'));
      [deployed, laptop] = await Promise.all([
        spawnHookrun({ databaseUrl: database.url!, env: { SCHEDULER: 'off' } }),
        spawnHookrun({ dataDir: join(dir, 'laptop'), env: { SCHEDULER: 'off', ...LAPTOP } }),
      ]);
      proxy = await startTcpProxy('127.0.0.1', Number(new URL(deployed.url).port));
      const wrong = await hookrunCli(['listen', '--from', deployed.url, '--token', 'not-the-token'], LAPTOP);
      expect(wrong.code).toBe(78);
      expect(wrong.stderr).toMatch(/answered 401/);

      listener = await spawnHookrun({
        args: ['listen', '--from', `http://127.0.0.1:${proxy.port}`, '--to', laptop.url],
        waitReady: false,
        env: { ...LAPTOP, HOOKRUN_REMOTE_TOKEN: SECRETS.admin },
      });
      await pollUntil('listen connected', 20_000, async () => (/listening to /.test(listener!.output()) ? true : undefined));

      const first = [checkoutCompleted('relay1'), clerkUserCreated('relay1'), supabaseInsert('relay1')];
      const sentAt = Date.now();
      for (const d of first) expect(await sendDelivery(deployed.url, d)).toMatchObject({ status: 200 });
      const arrived = await pollUntil('3 events on the laptop', 20_000, async () =>
        (await events(laptop.url, LAPTOP.ADMIN_TOKEN)).length === 3 ? Date.now() : undefined,
      );
      const remote = await events(deployed.url, SECRETS.admin);
      const local = await events(laptop.url, LAPTOP.ADMIN_TOKEN);
      const identity = (rows: Row[]) => rows.map((r) => `${r.source} ${r.type} ${r.key}`).sort();
      expect(identity(local)).toEqual(identity(remote));
      expect(local.map((r) => r.key)).toContain(stripeId(first[0]!));
      await pollUntil('the user mirrored on the laptop', 20_000, async () => {
        const res = await fetch(`${laptop.url}/api/mirror/users?search=relay1`, { headers: { authorization: `Bearer ${LAPTOP.ADMIN_TOKEN}` } });
        return ((await res.json()) as { rows: unknown[] }).rows.length === 1 ? true : undefined;
      });

      // Cut the stream; events arrive on the deployed hookrun meanwhile; nothing is missed after the reconnect.
      proxy.cut('reset');
      const during = [clerkUserCreated('relay2'), checkoutCompleted('relay2')];
      for (const d of during) expect(await sendDelivery(deployed.url, d)).toMatchObject({ status: 200 });
      proxy.restore();
      await pollUntil('5 events on the laptop after the reconnect', 40_000, async () =>
        (await events(laptop.url, LAPTOP.ADMIN_TOKEN)).length === 5 ? true : undefined,
      );
      expect(identity(await events(laptop.url, LAPTOP.ADMIN_TOKEN))).toEqual(identity(await events(deployed.url, SECRETS.admin)));
      expect(listener.output()).toMatch(/stream interrupted .* reconnecting in \d+ ms from event \d+/);

      listener.kill('SIGINT');
      expect(await listener.waitForExit(10_000)).toEqual({ code: 0, signal: null });
      reportFigures('18 listen relay', { relayedLive: first.length, firstRelayMs: arrived - sentAt, relayedAfterCut: during.length, missed: 0 });
    },
  );

  it('events pull copies a dead event (by id, and by --status dead --since 1h) into the laptop under the same key', { timeout: 60_000 }, async () => {
    // A subscription event without the fields the handler reads: dead at once on the deployed hookrun.
    const broken = stripeDelivery({
      id: 'evt_relay_dead',
      object: 'event',
      type: 'customer.subscription.updated',
      created: Math.floor(Date.now() / 1000),
      data: { object: { id: 'sub_relay' } },
    });
    expect(await sendDelivery(deployed.url, broken)).toMatchObject({ status: 200 });
    const [dead] = await pollUntil('the event dead on the deployed hookrun', 20_000, async () => {
      const rows = await events(deployed.url, SECRETS.admin, '&status=dead');
      return rows.length === 1 ? rows : undefined;
    });
    const env = { ...LAPTOP, HOOKRUN_REMOTE_TOKEN: SECRETS.admin };
    const pulled = await hookrunCli(['events', 'pull', String(dead!.id), '--from', deployed.url, '--to', laptop.url], env);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(pulled.stdout).toMatch(/payments {2}customer\.subscription\.updated {2}evt_relay_dead {2}→ 200 .*"duplicate":false/);
    await pollUntil('the copy dead on the laptop too', 20_000, async () =>
      (await events(laptop.url, LAPTOP.ADMIN_TOKEN, '&status=dead')).some((r) => r.key === 'evt_relay_dead') ? true : undefined,
    );
    const again = await hookrunCli(['events', 'pull', '--status', 'dead', '--since', '1h', '--from', deployed.url, '--to', laptop.url, '--json'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ pulled: 1, results: [{ key: 'evt_relay_dead', answer: { status: 200 } }] });
    expect((await hookrunCli(['events', 'pull', '1', '--from', deployed.url, '--to', 'http://192.0.2.1:3002'], env)).code).toBe(2);
  });
});
