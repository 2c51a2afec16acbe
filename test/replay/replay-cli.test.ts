import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliInProcess, type CliResult } from '../helpers/cli.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { REPO_ROOT, baseEnv } from '../helpers/spawn-hookrun.js';
import { createDefaultHandlers } from '../../src/inbox/handlers/defaults.js';
import { seedDeliveries, storeEvent } from '../inbox/fixtures.js';

/** `hookrun <args>` (in-process) on the test database (the CLI opens it itself: no server runs). */
function hookrun(args: string[], databaseUrl: string): Promise<CliResult> {
  return runCliInProcess(args, { ...baseEnv(), DATABASE_URL: databaseUrl, PLATFORM_CONFIG: join(REPO_ROOT, 'platform.json'), LOG_LEVEL: 'warn' }, REPO_ROOT);
}

describe.skipIf(!process.env.TEST_DATABASE_URL)('hookrun events replay (bulk) and replays (PostgreSQL)', { timeout: 120_000 }, () => {
  let testDb: TestDatabase;
  const ids: number[] = [];
  beforeAll(async () => {
    testDb = await createPostgresDatabase();
    for (let i = 0; i < 4; i++) ids.push(await storeEvent(testDb.db, 'auth', 'user.created', { data: { id: `user_${i}`, plan: i < 3 ? 'pro' : 'free' } }));
    await seedDeliveries(testDb.db, createDefaultHandlers(), 'dead');
  }, 300_000);
  afterAll(() => testDb?.close());

  const statuses = async () => (await testDb.db.query<{ status: string }>('SELECT status FROM hookrun.webhook_events ORDER BY id')).map((r) => r.status);

  it('--dry-run says what would run and writes nothing; then it replays, follows to the end, and the audit lists it', async () => {
    const dry = await hookrun(['events', 'replay', '--status', 'dead', '--where', 'data.plan = pro', '--dry-run'], testDb.url!);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('would replay 3 of 3 event(s) matching status dead, payload data.plan = pro');
    expect(await statuses()).toEqual(['dead', 'dead', 'dead', 'dead']);
    expect(await testDb.db.query('SELECT 1 FROM hookrun.replay_batches')).toEqual([]);

    const run = await hookrun(['events', 'replay', '--status', 'dead', '--where', 'data.plan = pro', '--rate', '2'], testDb.url!);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^bulk replay \d+ done: replayed 3 of 3$/m);
    expect(await statuses()).toEqual(['pending', 'pending', 'pending', 'dead']);

    const list = await hookrun(['events', 'replays', '--json'], testDb.url!);
    const { replays } = JSON.parse(list.stdout) as { replays: Array<{ actor: string; status: string; total: number }> };
    expect(replays).toHaveLength(1);
    expect(replays[0]).toMatchObject({ status: 'done', total: 3 });
    expect(replays[0]!.actor).toMatch(/^admin via cli \(cli:.+@.+\)$/);
  });

  it('--no-wait prints the id; nothing matching is not an error; the single-event form still works; bad flags are usage errors', async () => {
    const later = await hookrun(['events', 'replay', '--status', 'dead', '--no-wait'], testDb.url!);
    expect(later.code, later.stderr).toBe(0);
    expect(later.stdout).toMatch(/^bulk replay \d+ started: 1 event\(s\) at 10\/s/);
    const none = await hookrun(['events', 'replay', '--status', 'ignored'], testDb.url!);
    expect(none.code).toBe(0);
    expect(none.stdout).toContain('No events to replay: none matches status ignored.');
    const one = await hookrun(['events', 'replay', String(ids[0])], testDb.url!);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toContain(`event ${ids[0]} replayed: pending`);
    const both = await hookrun(['events', 'replay', String(ids[0]), '--status', 'dead'], testDb.url!);
    expect(both.code).toBe(2);
    const badWhere = await hookrun(['events', 'replay', '--where', 'no operator'], testDb.url!);
    expect(badWhere.code).toBe(2); // a 400 from the API is a usage error
    expect(badWhere.stderr).toContain('The payload search (where) is not understood');
  });
});
