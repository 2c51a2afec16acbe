import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { REPO_ROOT, TEST_NODE_FLAGS, baseEnv, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';

describe.skipIf(!process.env.TEST_DATABASE_URL)('a second terminal without DATABASE_URL (spawned)', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-cli-stale-'));
  let database: TestDatabase | undefined;
  let server: HookrunProcess | undefined;

  afterAll(async () => {
    await server?.stop();
    await database?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is warned that the server on PORT uses PostgreSQL while it reads the embedded DATA_DIR', async () => {
    database = await createPostgresDatabase();
    server = await spawnHookrun({ databaseUrl: database.url!, env: { SCHEDULER: 'off' } });
    const result = await new Promise<{ code: number; stderr: string }>((resolve) => {
      const env = { ...baseEnv(), PORT: new URL(server!.url).port, DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'warn' };
      execFile(
        process.execPath,
        [...TEST_NODE_FLAGS, join(REPO_ROOT, 'dist', 'main.js'), 'events', 'list'],
        { cwd: REPO_ROOT, env, timeout: 60_000 },
        (error, _stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stderr }),
      );
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /the hookrun on port \d+ uses PostgreSQL, but this command has no DATABASE_URL and reads the embedded database in .*\. Set DATABASE_URL/,
    );
  });
});
