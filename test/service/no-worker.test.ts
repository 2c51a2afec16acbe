import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { withDatabase } from '../helpers/inspect-db.js';
import { assertNoSecretLeaks } from '../helpers/secret-scan.js';
import { checkoutCompleted, sendDelivery } from '../helpers/signed-deliveries.js';
import { pollUntil, runHookrun, seedDataDir, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';

/** `hookrun start --no-worker` receives and stores; `hookrun worker` processes, in another process. */
describe('hookrun start --no-worker', () => {
  const started: HookrunProcess[] = [];
  let database: TestDatabase | undefined;
  afterAll(async () => {
    for (const proc of started) await proc.stop(5_000);
    await database?.close();
    assertNoSecretLeaks();
  });

  it('is refused on the embedded database (exit 78): nothing else could process what it stores', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hookrun-no-worker-'));
    await seedDataDir(dataDir);
    const result = await runHookrun({ dataDir, args: ['start', '--no-worker'] });
    expect(result.code, result.output).toBe(78);
    expect(result.output).toContain('--no-worker needs DATABASE_URL');
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'on PostgreSQL stores and answers 200, leaves the event pending, and a separate `hookrun worker` processes it',
    { timeout: 60_000 },
    async () => {
      database = await createPostgresDatabase();
      const receiver = await spawnHookrun({ databaseUrl: database.url, args: ['start', '--no-worker'] });
      started.push(receiver);
      const delivery = checkoutCompleted('no_worker');
      const answer = await sendDelivery(receiver.url, delivery);
      expect('status' in answer && answer.status, JSON.stringify(answer)).toBe(200);
      const statusOf = () =>
        withDatabase({ url: database!.url }, async (query) =>
          (await query<{ status: string }>(`SELECT status FROM hookrun.webhook_events WHERE source = 'payments'`)).map((r) => r.status),
        );
      // Nothing in the receiver processes it: still pending after well past the worker's 1 s poll.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(await statusOf()).toEqual(['pending']);

      const worker = await spawnHookrun({ databaseUrl: database.url, args: ['worker'], waitReady: false });
      started.push(worker);
      await pollUntil('the worker to process the event', 30_000, async () => ((await statusOf())[0] === 'processed' ? true : undefined));
      const customers = await withDatabase({ url: database.url }, (query) => query<{ id: string }>('SELECT id FROM hookrun.customers'));
      expect(customers).toHaveLength(1);
    },
  );
});
