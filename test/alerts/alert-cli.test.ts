import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAlertReceiver, type AlertReceiver } from '../helpers/alert-receiver.js';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { SECRETS } from '../helpers/config.js';
import { sendDelivery, svixDelivery } from '../helpers/signed-deliveries.js';
import { seedDataDir, spawnHookrun, type HookrunProcess, runCli } from '../helpers/spawn-hookrun.js';

describe('alerts from a spawned hookrun (embedded database)', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-alerts-'));
  const dataDir = join(dir, 'data');
  let receiver: AlertReceiver;
  let server: HookrunProcess | undefined;

  beforeAll(async () => {
    receiver = await startAlertReceiver();
    await Promise.all([ensureDistBuilt(), seedDataDir(dataDir)]);
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('`hookrun alert test` delivers one message (0), reports a refusal without the URL (1), and names the setting when unset (78)', async () => {
    const sent = await runCli(['alert', 'test'], { ALERT_WEBHOOK_URL: receiver.url });
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toContain('Test alert delivered');
    expect(receiver.delivered()).toEqual([expect.stringMatching(/^hookrun \(.+\): test alert: if you can read this, alerts reach you$/)]);

    receiver.answer(500);
    const refused = await runCli(['alert', 'test', '--message', 'second'], { ALERT_WEBHOOK_URL: receiver.url });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('ALERT_WEBHOOK_URL answered 500');

    const closed = await import('node:net').then(({ createServer }) => createServer());
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const nowhere = await runCli(['alert', 'test'], { ALERT_WEBHOOK_URL: `http://127.0.0.1:${closedPort}/services/alert-url-secret-part` });
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).toContain('ALERT_WEBHOOK_URL: could not connect (ECONNREFUSED)');

    const unset = await runCli(['alert', 'test'], {});
    expect(unset.code).toBe(78);
    expect(unset.stderr).toContain('No alert destination is set');
    expect((await runCli(['alert', 'test'], { ALERT_WEBHOOK_URL: 'ftp://x' })).code).toBe(78);
    const check = await runCli(['check'], { ALERT_WEBHOOK_URL: receiver.url, PLATFORM_CONFIG: '/nonexistent/platform.json' });
    expect(check.stdout).toContain(`alerts       ALERT_WEBHOOK_URL set: to ${new URL(receiver.url).host}`);
    for (const out of [sent, refused, nowhere, unset, check]) expect(out.stdout + out.stderr).not.toContain('alert-url-secret-part');
  });

  it('`hookrun start` tells the issue when a delivered event goes dead (within seconds: the failure nudges the monitor), and never logs the URL', async () => {
    server = await spawnHookrun({ dataDir, env: { ALERT_WEBHOOK_URL: receiver.url, SCHEDULER: 'off' } });
    const before = receiver.delivered().length;
    // A Clerk user.created whose `data` has no id: verified and stored, then dead at once (malformed).
    const answer = await sendDelivery(server.url, svixDelivery('auth', 'msg_alert_dead_1', { type: 'user.created', object: 'event', data: {} }, SECRETS.auth));
    expect(answer).toMatchObject({ status: 200 });
    const all = await receiver.waitForDelivered(before + 1, 20_000);
    expect(all[before]).toContain('1 issue opened');
    expect(all[before]).toMatch(/issue #\d+ Handler \S+ fails: .* \(handler_failing, 1 time so far\): \/admin\/issues\/\d+/);
    await server.stop();
    expect(server.output()).not.toContain('alert-url-secret-part');
    server = undefined;
  });
});
