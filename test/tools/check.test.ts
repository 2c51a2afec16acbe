import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliInProcess } from '../helpers/cli.js';
import { createEmptyPostgresDatabase } from '../helpers/db.js';
import { HOOKRUN, useProjectDirs } from '../helpers/project-dir.js';
import { baseEnv, seedDataDir } from '../helpers/spawn-hookrun.js';

const handler = (on: string[]) => `import { defineHandler } from ${HOOKRUN};\nexport default defineHandler({ on: ${JSON.stringify(on)}, async run() {} });\n`;
const job = `import { defineJob } from ${HOOKRUN};\nexport default defineJob({ run() {} });\n`;

describe('hookrun check runs the checks hookrun start runs, without starting', { timeout: 60_000 }, () => {
  const project = useProjectDirs('hookrun-check-');
  let database: { url: string; drop(): Promise<void> };
  const check = (dir: string, env: Record<string, string>, args: string[] = []) =>
    runCliInProcess(['check', ...args], { ...baseEnv(), HOOKRUN_PROJECT: dir, ...env }, dir);

  beforeAll(async () => {
    database = await createEmptyPostgresDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('passes a good project on PostgreSQL, each check ok, and writes nothing to the database', async () => {
    const dir = project({ 'handlers/welcome.ts': handler(['clerk:user.created', 'github:push']), 'jobs/nightly.ts': job });
    const result = await check(dir, { DATABASE_URL: database.url });
    expect(result.code, result.stderr).toBe(0);
    for (const name of ['settings', 'secrets', 'jobs', 'handlers', 'database']) expect(result.stdout).toMatch(new RegExp(`^  ${name} +ok `, 'm'));
    expect(result.stdout).toMatch(/^ {2}handlers +ok +1 project handler loaded/m);
    expect(result.stdout).toMatch(/^ {2}database +ok +PostgreSQL answers$/m);
    expect(result.stdout).toContain('configuration OK');
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`,
      );
      expect(rows[0]!.n).toBe(0);
    } finally {
      await client.end();
    }
  });

  it('fails (78) on a misspelled event name, naming the file, the name and the nearest known one; the other checks still run', async () => {
    const dir = project({ 'handlers/welcome.ts': handler(['clerk:user.craeted']) });
    const result = await check(dir, { DATABASE_URL: database.url });
    expect(result.code).toBe(78);
    expect(result.stdout).toMatch(/^ {2}handlers +failed/m);
    expect(result.stdout).toMatch(/^ {2}database +ok/m);
    expect(result.stdout).not.toContain('configuration OK');
    expect(result.stderr).toMatch(/handlers check failed: \S*handlers\/welcome\.ts: "clerk:user\.craeted": .*Did you mean clerk:user\.created\?/);

    const json = await check(dir, { DATABASE_URL: database.url }, ['--json']);
    expect(json.code).toBe(78);
    const report = JSON.parse(json.stdout) as { ok: boolean; checks: Array<{ name: string; ok: boolean; detail: string }> };
    expect(report.ok).toBe(false);
    expect(report.checks.find((c) => c.name === 'handlers')).toMatchObject({ ok: false, detail: expect.stringContaining('clerk:user.created') });
  });

  it('fails (78) on an action on a GitHub event without actions, as the compiler does', async () => {
    const dir = project({ 'handlers/on-push.ts': handler(['github:push.created']) });
    const result = await check(dir, { DATABASE_URL: database.url });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain(`handlers/on-push.ts: "github:push.created": GitHub's "push" event has no actions. Did you mean github:push?`);
  });

  it('fails (78) on a PostgreSQL database that does not exist, saying so and what to do', async () => {
    const missing = new URL(database.url);
    missing.pathname = '/hookrun_nonexistent_db_x';
    const result = await check(project({ 'jobs/nightly.ts': job }), { DATABASE_URL: missing.toString() });
    expect(result.code).toBe(78);
    expect(result.stdout).toMatch(/^ {2}database +failed/m);
    expect(result.stdout).toMatch(/^ {2}jobs +ok/m);
    expect(result.stderr).toMatch(/database check failed: PostgreSQL at .* has no database "hookrun_nonexistent_db_x": create it/);
  });

  it('on the embedded database, does not create DATA_DIR: says start will, and fails when it could not', async () => {
    const dir = project({ 'jobs/nightly.ts': job });
    const dataDir = join(dir, 'data', 'pg');
    const result = await check(dir, { DATA_DIR: dataDir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^ {2}database +ok +embedded PGlite in .*: not created yet/m);
    expect(existsSync(join(dir, 'data'))).toBe(false);

    const underAFile = await check(dir, { DATA_DIR: join(dir, 'jobs', 'nightly.ts', 'data') });
    expect(underAFile.code).toBe(78);
    expect(underAFile.stderr).toMatch(/database check failed: DATA_DIR .*: cannot be created \(.*nightly\.ts is not a writable folder\)/);

    await seedDataDir(dataDir);
    const made = await check(dir, { DATA_DIR: dataDir });
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/^ {2}database +ok +embedded PGlite in .* opens$/m);
  });
});
