import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/client.js';
import { ensureDistBuilt } from './build-dist.js';
import { PGLITE_VERSION, TEST_CACHE } from './pglite-cache.js';
import { LOCAL_POSTGRES_URL, createPostgresTemplate, dropPostgresTemplate, postgresAnswers } from './postgres-template.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
    /** The migrated PostgreSQL database test databases are copied from ('' without PostgreSQL). */
    postgresTemplate: string;
  }
}

/** What the run shares: made by the first project's setup, reused by the others (each vitest project runs this file). */
interface Shared {
  pgliteTemplate: string;
  postgresTemplate: string;
  users: number;
}

const SHARED = Symbol.for('hookrun.test.globalSetup');
const REPO_ROOT = resolve(import.meta.dirname, '..', '..');

/**
 * Which PostgreSQL the run uses: TEST_DATABASE_URL when set (set empty, none);
 * else the local server when one answers at 127.0.0.1:5432, so `npm test`
 * as the README writes it covers PostgreSQL wherever one runs. Said in one
 * line either way (under CI=true a missing server fails the run). The URL
 * goes into the environment the test workers inherit.
 */
async function choosePostgres(): Promise<string | undefined> {
  const given = process.env.TEST_DATABASE_URL;
  if (given !== undefined) {
    if (given === '') console.warn('\n  PostgreSQL tests SKIPPED: TEST_DATABASE_URL is set empty. Unset it to use a local server, or give one.\n');
    return given || undefined;
  }
  if (await postgresAnswers(LOCAL_POSTGRES_URL)) {
    process.env.TEST_DATABASE_URL = LOCAL_POSTGRES_URL;
    console.warn(`\n  PostgreSQL tests run on the local server at ${LOCAL_POSTGRES_URL} (TEST_DATABASE_URL is not set).\n`);
    return LOCAL_POSTGRES_URL;
  }
  if (process.env.CI === 'true')
    throw new Error(`CI=true but no PostgreSQL answers at ${LOCAL_POSTGRES_URL} and TEST_DATABASE_URL is not set: .ci/run should have started it.`);
  console.warn(
    `\n  PostgreSQL tests SKIPPED: TEST_DATABASE_URL is not set and no PostgreSQL answers at ${LOCAL_POSTGRES_URL}. Run them with TEST_DATABASE_URL=postgres://user@host:port/db npm test\n`,
  );
  return undefined;
}

/**
 * Boot PGlite and migrate once (4-5 s): every test file loads a dump of it
 * instead of a fresh initdb. Likewise one migrated PostgreSQL database that
 * test databases are copied from.
 */
async function prepare(): Promise<Shared> {
  const postgresUrl = await choosePostgres();
  const [postgresTemplate] = await Promise.all([
    postgresUrl ? createPostgresTemplate(postgresUrl) : Promise.resolve(''),
    // Spawned-process tests run dist/main.js: rebuilt here when stale (CI's `npm ci` built it).
    ensureDistBuilt(),
  ]);
  return { pgliteTemplate: await pgliteTemplate(), postgresTemplate, users: 0 };
}

/** What the migrated PGlite depends on: the migrations, the code that applies them, PGlite's version. */
function migrationsHash(): string {
  const hash = createHash('sha256').update(PGLITE_VERSION);
  for (const dir of ['drizzle', 'src/db'])
    for (const file of readdirSync(join(REPO_ROOT, dir), { recursive: true, encoding: 'utf8' }).sort()) {
      const path = join(REPO_ROOT, dir, file);
      if (statSync(path).isFile()) hash.update(file).update(readFileSync(path));
    }
  return hash.digest('hex').slice(0, 16);
}

/**
 * The migrated PGlite's dump, kept under node_modules/.cache between runs
 * (keyed by what it depends on): a run of one folder then starts in a
 * second, not the 3-5 s of booting and migrating a fresh PGlite.
 */
async function pgliteTemplate(): Promise<string> {
  const path = join(TEST_CACHE, `pglite-template-${migrationsHash()}.tar`);
  if (existsSync(path)) return path;
  const pglite = new PGlite();
  const db = await openDatabase({ pglite });
  await db.migrate();
  const dump = await pglite.dumpDataDir('none');
  await pglite.close();
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}`;
  await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
  await rename(partial, path); // whole or absent, even with two runs at once
  return path;
}

/** Make the run's shared databases once, hand them to this project's test files, and drop the PostgreSQL one after the last project. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const registry = globalThis as unknown as Record<symbol, Promise<Shared> | undefined>;
  const shared = await (registry[SHARED] ??= prepare());
  shared.users += 1;
  project.provide('pgliteTemplate', shared.pgliteTemplate);
  project.provide('postgresTemplate', shared.postgresTemplate);
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    if (shared.postgresTemplate) await dropPostgresTemplate(process.env.TEST_DATABASE_URL!, shared.postgresTemplate).catch(() => undefined);
  };
}
