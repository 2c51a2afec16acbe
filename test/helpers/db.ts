import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, inject } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import type { Database } from '../../src/db/database.js';

/** A database a test file owns: migrated, empty, and dropped by `close()`. */
export interface TestDatabase {
  db: Database;
  /** PostgreSQL only: a URL other processes (spawned servers) can use. */
  url?: string;
  close(): Promise<void>;
}

/** One way to get a fresh test database; a test file runs on every available kind (`databaseKinds()`) or on PGlite only (`pgliteOnly()`). */
export interface DatabaseKind {
  name: 'pglite' | 'postgres';
  create(): Promise<TestDatabase>;
}

/**
 * An in-memory PGlite as the migrated template the global setup made: one a
 * file of this fork gave back, emptied (a fork runs many files in one
 * process), or else a new one loaded from the template (~1 s).
 */
export async function createPgliteDatabase(): Promise<TestDatabase> {
  const pglite = pglitePool.pop() ?? (await loadPgliteTemplate());
  const db = await openDatabase({ pglite });
  return { db, close: () => giveBack(pglite, db) };
}

/** A PGlite loaded from the template, its LISTENs tracked so that `giveBack` can end what a file left open. */
async function loadPgliteTemplate(): Promise<PGlite> {
  const template = await readFile(inject('pgliteTemplate'));
  const pglite = new PGlite({ loadDataDir: new Blob([template]) });
  await pglite.waitReady;
  const listen = pglite.listen.bind(pglite);
  const open = new Set<() => Promise<void>>();
  listening.set(pglite, open);
  pglite.listen = async (...args: Parameters<PGlite['listen']>) => {
    const unlisten = await listen(...args);
    const once = async () => {
      if (open.delete(once)) await unlisten();
    };
    open.add(once);
    return once;
  };
  templateShape ??= await schemaShape(pglite);
  return pglite;
}

/** PGlite instances given back by the files before, ready for the next (at most two kept). */
const pglitePool: PGlite[] = [];
const listening = new WeakMap<PGlite, Set<() => Promise<void>>>();
let templateShape: string | undefined;

/**
 * Everything a database holds besides rows, as one hash: tables and their
 * columns, indexes, functions and triggers in every schema, and the
 * migrations applied. A file that changed any of it (a legacy layout, a
 * schema of its own) leaves a database no other file can use.
 */
async function schemaShape(pglite: PGlite): Promise<string> {
  const { rows } = await pglite.query<{ shape: string }>(`
    SELECT md5(concat_ws('|',
      (SELECT string_agg(format('%s.%s:%s:%s', n.nspname, c.relname, c.relkind,
                (SELECT string_agg(a.attname || ' ' || a.atttypid::regtype::text || CASE WHEN a.attnotnull THEN '!' ELSE '' END, ',' ORDER BY a.attnum)
                   FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped)), ';' ORDER BY n.nspname, c.relname)
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'),
      (SELECT string_agg(n.nspname || '.' || p.proname || ':' || md5(p.prosrc), ';' ORDER BY n.nspname, p.proname, md5(p.prosrc))
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')),
      (SELECT string_agg(t.tgrelid::regclass::text || '.' || t.tgname || ':' || t.tgenabled::text, ';' ORDER BY t.tgrelid::regclass::text, t.tgname)
         FROM pg_trigger t WHERE NOT t.tgisinternal),
      (SELECT string_agg(hash, ';' ORDER BY id) FROM hookrun.__drizzle_migrations)
    )) AS shape`);
  return rows[0]!.shape;
}

/**
 * A file is done with its PGlite: keep it for the next file when it is still
 * open and as the template made it (rows emptied, session reset, LISTENs
 * ended), else close it.
 */
async function giveBack(pglite: PGlite, db: Database): Promise<void> {
  if (pglite.closed) return;
  try {
    for (const unlisten of [...(listening.get(pglite) ?? [])]) await unlisten();
    await pglite.exec('DISCARD ALL');
    await emptyTables(db);
    if (pglitePool.length < 2 && (await schemaShape(pglite)) === templateShape) {
      pglitePool.push(pglite);
      return;
    }
  } catch {
    // a database left unusable (an open transaction, a dropped table): closed below
  }
  await pglite.close();
}

/**
 * A throwaway database on the real PostgreSQL of TEST_DATABASE_URL, and how
 * to drop it: empty, or a copy of `template` (a database nobody is connected to).
 */
export async function createEmptyPostgresDatabase(
  baseUrl: string = process.env.TEST_DATABASE_URL!,
  template?: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `hookrun_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  await admin.end();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const dropper = new pg.Client({ connectionString: baseUrl });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await dropper.end();
    },
  };
}

/**
 * A throwaway database on the real PostgreSQL of TEST_DATABASE_URL, migrated:
 * copied from the run's migrated template (global-setup.ts), which is much
 * faster than migrating; `migrate()` then finds nothing to do.
 */
export async function createPostgresDatabase(baseUrl: string = process.env.TEST_DATABASE_URL!): Promise<TestDatabase> {
  const template = baseUrl === process.env.TEST_DATABASE_URL ? inject('postgresTemplate') || undefined : undefined;
  const empty = await createEmptyPostgresDatabase(baseUrl, template);
  const db = await openDatabase({ databaseUrl: empty.url });
  await db.migrate();
  return {
    db,
    url: empty.url,
    async close() {
      await db.close();
      await empty.drop();
    },
  };
}

const PGLITE: DatabaseKind = { name: 'pglite', create: createPgliteDatabase };

/*
 * Which to use in `describe.each`: `databaseKinds()` when the file's subject
 * depends on the database engine (SQL, migrations, claims and locks,
 * transactions, concurrency between connections or instances, the event
 * writer, flow control, retention, search, counts computed by SQL);
 * `pgliteOnly()` when the database only holds the file's fixtures (request
 * validation, signatures, HTTP shapes, pages, CLI output, config, auth).
 * When unsure, `databaseKinds()`.
 */

/** PGlite always; PostgreSQL too when TEST_DATABASE_URL is set (as in CI). Use with `describe.each`. */
export function databaseKinds(): DatabaseKind[] {
  const kinds: DatabaseKind[] = [PGLITE];
  if (process.env.TEST_DATABASE_URL) kinds.push({ name: 'postgres', create: () => createPostgresDatabase() });
  return kinds;
}

/**
 * PGlite only, even when TEST_DATABASE_URL is set: the file's subject does not
 * depend on the database engine; the SQL it runs is covered on PostgreSQL by
 * the files that test it. Use with `describe.each`, as `databaseKinds()`.
 */
export function pgliteOnly(): DatabaseKind[] {
  return [PGLITE];
}

/** hookrun's tables (migrations in drizzle/), emptied between tests. */
const TABLES = [
  'webhook_events',
  'webhook_event_keys',
  'cron_runs',
  'pages',
  'users',
  'organizations',
  'memberships',
  'customers',
  'subscriptions',
  'admin_sessions_revoked',
  'alert_claims',
  'event_attempts',
  'cron_pauses',
  'handler_deliveries',
  'flow_keys',
  'handler_controls',
  'event_requests',
  'replay_batches',
  'issues',
  'sender_rejections',
  'audit_entries',
  'new_events',
  'delivery_steps',
  'wait_paths',
];

/** Which of them hold rows: one statement. */
const NON_EMPTY = TABLES.map((t) => `SELECT '${t}' AS t WHERE EXISTS (SELECT 1 FROM hookrun.${t})`).join(' UNION ALL ');

/**
 * Restart each id sequence a test used (also those of tables emptied since),
 * as `ALTER SEQUENCE … RESTART` would: the next id is the first again.
 */
const RESTART_USED_SEQUENCES = `SELECT count(setval(format('hookrun.%I', sequencename), start_value, false)) FROM pg_sequences
  WHERE schemaname = 'hookrun' AND last_value IS NOT NULL AND sequencename <> '__drizzle_migrations_id_seq'`;

/**
 * Every row of hookrun's tables deleted and their ids restarted, in one
 * statement. Each table's DELETE is a step of it, so the foreign keys between
 * them are checked once all are empty, in any order; the search keys, which
 * TRUNCATE's CASCADE reaches from the events, are listed.
 */
const DELETE_ALL = `WITH ${[...TABLES, 'event_search'].map((t, i) => `d${i} AS (DELETE FROM hookrun.${t})`).join(', ')} ${RESTART_USED_SEQUENCES}`;

/**
 * Empty hookrun's tables and restart their ids, so the tests of a file start
 * clean without a new database. On PostgreSQL, row deletes in one statement:
 * a TRUNCATE there took about 53 ms a test (new files for each table and
 * index), the deletes 10, and autovacuum and the file's dropped database take
 * the dead rows. On PGlite, a TRUNCATE of the tables that hold rows: no vacuum
 * runs in it, and the dead rows deletes leave slowed the tests after them as
 * much as the deletes saved (measured over 40 database files).
 */
export async function emptyTables(db: Database): Promise<void> {
  if (db.kind === 'postgres') {
    await db.query(DELETE_ALL);
    return;
  }
  const full = (await db.query<{ t: string }>(NON_EMPTY)).map((r) => `hookrun.${r.t}`);
  if (full.length > 0) await db.query(`TRUNCATE ${full.join(', ')} RESTART IDENTITY CASCADE`);
  await db.query(RESTART_USED_SEQUENCES);
}

/** A test file's database, valid inside its tests and hooks. */
export interface TestDatabaseRef {
  readonly db: Database;
  readonly url: string | undefined;
}

/**
 * The usual life of a test file's database, registered as hooks: create it
 * once, empty it before each test, drop it after the file. Call it first in a
 * `describe`, so its `beforeEach` runs before the file's own.
 */
export function useTestDatabase(kind: DatabaseKind): TestDatabaseRef {
  let handle: TestDatabase | undefined;
  beforeAll(async () => {
    handle = await kind.create();
  });
  afterAll(async () => {
    await handle?.close();
  });
  beforeEach(async () => {
    await emptyTables(handle!.db);
  });
  return {
    get db() {
      return handle!.db;
    },
    get url() {
      return handle!.url;
    },
  };
}
