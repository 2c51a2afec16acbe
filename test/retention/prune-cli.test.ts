import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { SECRETS } from '../helpers/config.js';
import { checkoutCompleted, sendDelivery } from '../helpers/signed-deliveries.js';
import { pollUntil, seedDataDir, spawnHookrun, type HookrunProcess, runCli } from '../helpers/spawn-hookrun.js';

describe('hookrun prune (spawned, embedded database)', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-prune-'));
  const env = { DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'warn', SCHEDULER: 'off' };
  let server: HookrunProcess | undefined;

  beforeAll(async () => {
    await ensureDistBuilt();
    await seedDataDir(env.DATA_DIR);
    // 40 events processed 45 days ago, 5 still failing from then, 10 from today.
    const db = await openDatabase({ dataDir: env.DATA_DIR });
    await db.query(
      `INSERT INTO hookrun.webhook_events (source, key, type, payload, status, received_at)
       SELECT 'payments', 'evt_old' || g, 'checkout.session.completed', '{}'::jsonb,
              CASE WHEN g <= 40 THEN 'processed' ELSE 'failed' END, now() - interval '45 days'
       FROM generate_series(1, 45) g
       UNION ALL
       SELECT 'payments', 'evt_new' || g, 'invoice.paid', '{}'::jsonb, 'processed', now() FROM generate_series(1, 10) g`,
    );
    // The failing ones are still owed: their deliveries are (re)made by the next claim.
    await db.query(`INSERT INTO hookrun.new_events (event_id) SELECT id FROM hookrun.webhook_events WHERE status = 'failed'`);
    await db.close();
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('--dry-run counts, prune deletes (keeping keys), and a late retry of a deleted event is answered duplicate', async () => {
    const dry = await runCli(['prune', '--dry-run'], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/would delete:\n {2}40 finished events older than 30 days \(EVENT_RETENTION_DAYS/);
    expect(dry.stdout).toMatch(/Nothing was deleted/);
    const real = await runCli(['prune', '--json'], env);
    expect(real.code, real.stderr).toBe(0);
    expect(JSON.parse(real.stdout)).toMatchObject({ dryRun: false, events: 40, dedupeKeys: 0, cronRuns: 0 });
    expect((await runCli(['prune', '--json'], { ...env, DEDUPE_RETENTION_DAYS: '7' })).stderr).toMatch(
      /DEDUPE_RETENTION_DAYS=7 is shorter than EVENT_RETENTION_DAYS=30/,
    );

    server = await spawnHookrun({ dataDir: env.DATA_DIR, env: { ...env, LOG_LEVEL: 'info' } });
    // Stripe resends evt_old7 (deleted above): a duplicate, not a new event.
    const retry = await sendDelivery(server.url, checkoutCompleted('old7'));
    expect(retry).toMatchObject({ status: 200 });
    expect(JSON.parse((retry as { body: string }).body)).toMatchObject({ duplicate: true });

    // While the server holds DATA_DIR, the CLI goes through its admin API.
    const admin = { headers: { authorization: `Bearer ${SECRETS.admin}` } };
    await pollUntil('the old failed events retried', 20_000, async () => {
      const { counts } = (await (await fetch(`${server!.url}/api/events/counts`, admin)).json()) as { counts: Record<string, number> };
      return counts.failed === 0 && counts.pending === 0 ? true : undefined;
    });
    const remote = { ...env, PORT: new URL(server.url).port };
    const viaApi = await runCli(['prune', '--dry-run', '--json'], remote);
    expect(viaApi.code, viaApi.stderr).toBe(0);
    // The 5 old failed events were kept; the server's worker has since finished them, so they are due for deletion now.
    expect(JSON.parse(viaApi.stdout)).toMatchObject({ dryRun: true, events: 5 });
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/hookrun_table_bytes\{table="webhook_events"\} [1-9]\d*/);
    expect(metrics).toMatch(/hookrun_table_bytes\{table="webhook_event_keys"\} [1-9]\d*/);
    const list = await fetch(`${server.url}/api/events?limit=200`, admin);
    expect(((await list.json()) as { events: unknown[] }).events).toHaveLength(15); // 5 old + 10 new; the late retry added nothing
  });
});
