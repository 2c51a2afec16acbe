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
