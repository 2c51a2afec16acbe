import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { runCli, seedDataDir } from '../helpers/spawn-hookrun.js';
import { useProjectDirs } from '../helpers/project-dir.js';
import { storeEvent, stripeEvent } from '../inbox/fixtures.js';
import { handlerFile, startService } from './support.js';

const project = useProjectDirs('hookrun-show-steps-');

describe("hookrun events show lists each delivery's steps", { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-show-steps-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('step, status, attempts, duration, error, sleeping until and waiting for', async () => {
    const env = { DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'warn', SCHEDULER: 'off' };
    await seedDataDir(env.DATA_DIR);
    const db = await openDatabase({ dataDir: env.DATA_DIR });
    let id: number;
    try {
      const body = `await ctx.step('create-account', () => ({ id: 'acct_1' }));
        await ctx.waitForEvent('first-invoice', { on: 'stripe:invoice.paid', match: 'data.object.customer', timeout: '1d' });`;
      const service = await startService(db, project({ 'handlers/checkout.ts': handlerFile('stripe:checkout.session.completed', body) }));
      id = await storeEvent(db, 'payments', 'checkout.session.completed', stripeEvent('checkout.session.completed', 1, { id: 'cs_1', customer: 'cus_9' }));
      await service.drain();
    } finally {
      await db.close();
    }
    const show = await runCli(['events', 'show', String(id)], env);
    expect(show.code, show.stderr).toBe(0);
    const lines = show.stdout.split('\n');
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}checkout: pending, attempt 0/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {4}step create-account: succeeded, attempts 1 in \d+ ms$/));
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^ {4}step first-invoice: waiting for payments:invoice\.paid data\.object\.customer = cus_9 until \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ, attempts 1$/,
      ),
    );
    const json = JSON.parse((await runCli(['events', 'show', String(id), '--json'], env)).stdout) as {
      deliveries: Array<{ handler: string; steps: unknown[] }>;
    };
    expect(json.deliveries.find((d) => d.handler === 'checkout')!.steps).toHaveLength(2);
  });
});
