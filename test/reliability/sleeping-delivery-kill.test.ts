import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { acknowledged, sendDelivery, stripeDelivery } from '../helpers/signed-deliveries.js';
import { SECRETS } from '../helpers/config.js';
import { pollUntil, REPO_ROOT, seedDataDir, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';

/** A handler that records a step, sleeps 3 s, then records another: the package's own dist, as an installed project imports it. */
const HANDLER = `import { defineHandler } from ${JSON.stringify(join(REPO_ROOT, 'dist', 'index.js'))};
export default defineHandler({
  on: ['stripe:invoice.paid'],
  async run(event, ctx) {
    await ctx.step('before', async () => { await ctx.db.query("INSERT INTO step_runs VALUES ('before')"); });
    await ctx.sleep('nap', '3s');
    await ctx.step('after', async () => { await ctx.db.query("INSERT INTO step_runs VALUES ('after')"); });
  },
});
`;

describe.skipIf(!process.env.TEST_DATABASE_URL)('kill -9 while a delivery sleeps (PostgreSQL)', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-sleep-kill-'));
  let testDb: TestDatabase | undefined;
  const running: HookrunProcess[] = [];
  afterAll(async () => {
    for (const p of running) await p.stop();
    await testDb?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a new process resumes it after the sleep: the step before runs once, the step after once', async () => {
    testDb = await createPostgresDatabase();
    const { db, url } = testDb;
    await db.query('CREATE TABLE step_runs (step text)');
    mkdirSync(join(dir, 'handlers'));
    writeFileSync(join(dir, 'handlers', 'nudge.ts'), HANDLER);
    const spawnIt = async () => {
      const p = await spawnHookrun({ databaseUrl: url!, env: { HOOKRUN_PROJECT: dir, SCHEDULER: 'off' } });
      running.push(p);
      return p;
    };
    const first = await spawnIt();
    const event = {
      id: 'evt_sleep_kill',
      object: 'event',
      type: 'invoice.paid',
      created: Math.floor(Date.now() / 1000),
      data: { object: { id: 'in_1', object: 'invoice', customer: 'cus_1' } },
    };
    expect(acknowledged(await sendDelivery(first.url, stripeDelivery(event)))).toBe(true);
    const asleep = `SELECT d.status FROM hookrun.handler_deliveries d JOIN hookrun.delivery_steps s ON s.delivery_id = d.id
                    WHERE d.handler = 'nudge' AND s.step_id = 'nap' AND s.status = 'sleeping' AND d.status = 'pending'`;
    await pollUntil('the delivery asleep', 30_000, async () => ((await db.query(asleep)).length > 0 ? true : undefined));
    first.kill('SIGKILL');
    await first.waitForExit(10_000);

    await spawnIt();
    const done = `SELECT 1 FROM hookrun.handler_deliveries WHERE handler = 'nudge' AND status = 'processed'`;
    await pollUntil('the delivery processed after its sleep', 60_000, async () => ((await db.query(done)).length > 0 ? true : undefined));
    const runs = await db.query<{ step: string; n: number }>('SELECT step, count(*)::int AS n FROM step_runs GROUP BY step ORDER BY step');
    expect(runs).toEqual([
      { step: 'after', n: 1 },
      { step: 'before', n: 1 },
    ]);
  });
});

/** The same handler on the embedded database: its steps say they ran in the log (nothing else may open the data dir meanwhile). */
const LOGGING_HANDLER = HANDLER.replace(`await ctx.db.query("INSERT INTO step_runs VALUES ('before')");`, `ctx.log.info('step before ran');`).replace(
  `await ctx.db.query("INSERT INTO step_runs VALUES ('after')");`,
  `ctx.log.info('step after ran');`,
);

describe('kill -9 while a delivery sleeps (embedded database)', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-sleep-kill-embedded-'));
  const running: HookrunProcess[] = [];
  afterAll(async () => {
    for (const p of running) await p.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a new process resumes it after the sleep: the step before runs once, the step after once', async () => {
    mkdirSync(join(dir, 'project', 'handlers'), { recursive: true });
    writeFileSync(join(dir, 'project', 'handlers', 'nudge.ts'), LOGGING_HANDLER);
    await seedDataDir(join(dir, 'data'));
    const spawnIt = async () => {
      const p = await spawnHookrun({ dataDir: join(dir, 'data'), env: { HOOKRUN_PROJECT: join(dir, 'project'), SCHEDULER: 'off' } });
      running.push(p);
      return p;
    };
    const admin = { headers: { authorization: `Bearer ${SECRETS.admin}` } };
    const stepsOf = async (p: HookrunProcess) => {
      const { events } = (await (await fetch(`${p.url}/api/events?source=payments`, admin)).json()) as { events: Array<{ id: number }> };
      return events[0] ? JSON.stringify(await (await fetch(`${p.url}/api/events/${events[0].id}`, admin)).json()) : '';
    };
    const first = await spawnIt();
    const event = {
      id: 'evt_sleep_kill_embedded',
      object: 'event',
      type: 'invoice.paid',
      created: Math.floor(Date.now() / 1000),
      data: { object: { id: 'in_2', object: 'invoice', customer: 'cus_2' } },
    };
    expect(acknowledged(await sendDelivery(first.url, stripeDelivery(event)))).toBe(true);
    await pollUntil('the delivery asleep', 30_000, async () => ((await stepsOf(first)).includes('"sleeping"') ? true : undefined));
    first.kill('SIGKILL');
    await first.waitForExit(10_000);

    const next = await spawnIt();
    await pollUntil('the step after the sleep', 60_000, () => (next.output().includes('step after ran') ? true : undefined));
    const said = (line: string) => (first.output() + next.output()).split(line).length - 1;
    expect([said('step before ran'), said('step after ran')]).toEqual([1, 1]);
  });
});
