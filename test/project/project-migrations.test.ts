import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { applyProjectMigrations } from '../../src/project/migrations.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';

describe.each(databaseKinds())("a project's migrations/ folder on $name", (kind) => {
  const testDb = useTestDatabase(kind);
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-migrations-'));
  mkdirSync(join(dir, 'migrations'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string) => writeFileSync(join(dir, 'migrations', name), text);

  it('applies each file once, in name order, several statements split as drizzle-kit writes them; a changed or failing file applies nothing', async () => {
    await testDb.db.query('DROP TABLE IF EXISTS public.order_status');
    write(
      '0001_order_status.sql',
      'CREATE TABLE order_status (order_id text PRIMARY KEY, status text NOT NULL);\n--> statement-breakpoint\nCREATE INDEX order_status_status_idx ON order_status (status);\n',
    );
    write('0002_seed.sql', "-- a comment\nINSERT INTO order_status VALUES ('7', 'paid');\n");
    expect(await applyProjectMigrations(testDb.db, dir)).toEqual(['0001_order_status.sql', '0002_seed.sql']);
    expect(await applyProjectMigrations(testDb.db, dir)).toEqual([]);
    expect(await testDb.db.query('SELECT order_id, status FROM public.order_status')).toEqual([{ order_id: '7', status: 'paid' }]);

    write('0003_bad.sql', "INSERT INTO order_status VALUES ('8', 'new');\n--> statement-breakpoint\nINSERT INTO no_such_table VALUES (1);\n");
    const failed = await applyProjectMigrations(testDb.db, dir).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ConfigError);
    expect((failed as Error).message).toMatch(/0003_bad\.sql failed, nothing of it applied: .*no_such_table/);
    expect(await testDb.db.query('SELECT count(*)::int AS n FROM public.order_status')).toEqual([{ n: 1 }]);
    rmSync(join(dir, 'migrations', '0003_bad.sql'));

    write('0001_order_status.sql', 'CREATE TABLE order_status (order_id text PRIMARY KEY);\n');
    const changed = await applyProjectMigrations(testDb.db, dir).catch((e: unknown) => e);
    expect((changed as Error).message).toMatch(/0001_order_status\.sql changed after it was applied/);
  });
});
