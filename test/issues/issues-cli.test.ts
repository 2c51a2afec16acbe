import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordSighting } from '../../src/issues/issue-store.js';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { runCli } from '../helpers/spawn-hookrun.js';

describe.skipIf(!process.env.TEST_DATABASE_URL)('hookrun issues list|ack|resolve (spawned, on PostgreSQL)', { timeout: 120_000 }, () => {
  let testDb: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    await ensureDistBuilt();
    testDb = await createPostgresDatabase();
    env = { DATABASE_URL: testDb.url!, LOG_LEVEL: 'warn', PLATFORM_CONFIG: '/nonexistent/platform.json' };
  }, 180_000);
  afterAll(async () => {
    await testDb?.close();
  });

  it('lists the open issue, acknowledges it, resolves it; an unknown id is exit 1 naming the id', async () => {
    const at = new Date();
    const sighting = { kind: 'job_failing' as const, subject: 'nightly', title: 'Job nightly fails', detail: 'disk full', seenAt: at, firstSeenAt: at };
    await recordSighting(testDb.db, { ...sighting, fingerprint: 'job_failing:nightly', occurrences: 3 }, 'i.occurrences');
    const list = await runCli(['issues', 'list'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^ID\s+KIND\s+TITLE\s+COUNT/m);
    const id = /^\s*(\d+)\s+job_failing\s+Job nightly fails\s+3\s/m.exec(list.stdout)?.[1];
    expect(id, list.stdout).toBeDefined();

    const ack = await runCli(['issues', 'ack', id!], env);
    expect(ack.stdout).toContain(`Issue ${id} acknowledged: Job nightly fails (3 so far).`);
    expect((await runCli(['issues', 'list'], env)).stdout).toContain('No open issues.');
    const acknowledged = JSON.parse((await runCli(['issues', 'list', '--status', 'acknowledged', '--json'], env)).stdout) as Array<{ id: number }>;
    expect(acknowledged.map((i) => String(i.id))).toEqual([id]);

    const resolved = await runCli(['issues', 'resolve', id!, '--json'], env);
    expect(JSON.parse(resolved.stdout)).toMatchObject({ status: 'resolved', resolvedBy: 'admin via cli' });
    const unknown = await runCli(['issues', 'ack', '987654'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No issue with id 987654');
  });
});
