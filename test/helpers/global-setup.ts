import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/client.js';
import { ensureDistBuilt } from './build-dist.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
  }
}

/**
 * Boot PGlite and migrate once per run (4-5 s), then hand every test file a
 * dump of it: loading a dump takes ~0.7 s instead of a fresh initdb. Also
 * rebuild dist/ when stale, for the tests that spawn the real process.
 */
export default async function setup(project: TestProject): Promise<void> {
  if (!process.env.TEST_DATABASE_URL && !process.env.HOOKRUN_TEST_WARNED_NO_POSTGRES) {
    process.env.HOOKRUN_TEST_WARNED_NO_POSTGRES = '1'; // once per run, not once per vitest project
    console.warn(
      '\n  PostgreSQL tests SKIPPED: TEST_DATABASE_URL is not set, so every test runs on the embedded PGlite only. Enable them with TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test\n',
    );
  }
  await ensureDistBuilt();
  const pglite = new PGlite();
  const db = await openDatabase({ pglite });
  await db.migrate();
  const dump = await pglite.dumpDataDir('none');
  await pglite.close();
  const path = join(tmpdir(), `hookrun-pglite-template-${process.pid}.tar`);
  await writeFile(path, Buffer.from(await dump.arrayBuffer()));
  project.provide('pgliteTemplate', path);
}
