import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { MIGRATIONS_FOLDER, type Database, type OpenOptions } from '../../src/db/database.js';
import { readMigrations } from '../../src/db/migration-files.js';
import { createEmptyPostgresDatabase, createPgliteDatabase, type TestDatabase } from '../helpers/db.js';
import { makeLegacyDataDir, makeLegacyPostgres, schemaShape } from '../helpers/legacy-layout.js';
import { drain, storeEvent, testWorker, clerkUser } from '../inbox/fixtures.js';

const ALL_TABLES = 13;
/** The migrations after the baseline: an upgraded database runs them like a fresh one. */
const AFTER_BASELINE = readMigrations(MIGRATIONS_FOLDER)
  .slice(1)
  .map((m) => m.tag);

/** One kind of storage a previous release may have left: a PostgreSQL database or an embedded data dir. */
interface Store {
  name: string;
  /** Make an empty one; `legacy(count)` fills it as the previous release did; `open()` opens it with this release. */
  create(): Promise<{ legacy(count?: number): Promise<void>; open(options?: Partial<OpenOptions>): Promise<Database>; drop(): Promise<void> }>;
}

const root = mkdtempSync(join(tmpdir(), 'hookrun-upgrade-'));
const stores: Store[] = [
  {
    name: 'embedded data dir',
    async create() {
      const dataDir = mkdtempSync(join(root, 'data-'));
      return {
        legacy: (count) => makeLegacyDataDir(dataDir, count),
        open: (options) => openDatabase({ dataDir, fsync: false, ...options }),
        drop: async () => rmSync(dataDir, { recursive: true, force: true }),
      };
    },
  },
];
if (process.env.TEST_DATABASE_URL) {
  stores.push({
    name: 'PostgreSQL',
    async create() {
      const empty = await createEmptyPostgresDatabase();
      return {
        legacy: (count) => makeLegacyPostgres(empty.url, count),
        open: (options) => openDatabase({ databaseUrl: empty.url, ...options }),
        drop: empty.drop,
      };
    },
  });
}

let fresh: TestDatabase;
beforeAll(async () => {
  fresh = await createPgliteDatabase(); // the baseline's layout, for comparison
});
afterAll(async () => {
  await fresh?.close();
  rmSync(root, { recursive: true, force: true });
});

const count = async (db: Database, sql: string, params: unknown[] = []) => Number((await db.query<{ n: number | string }>(sql, params))[0]!.n);

describe.each(stores)('upgrading what the previous release made ($name)', { timeout: 120_000 }, (store) => {
  it('moves every table and row into schema hookrun, ids continuing, and leaves nothing of hookrun in public or drizzle', async () => {
    const handle = await store.create();
    await handle.legacy();
    const db = await handle.open();
    try {
      const report = await db.migrate();
      expect(report.movedFromPublic).toHaveLength(ALL_TABLES);
      expect(report.applied).toEqual(AFTER_BASELINE); // the moved tables are the baseline: recorded, not run; later migrations run
      expect((await db.query<{ key: string }>('SELECT key FROM hookrun.webhook_events ORDER BY id')).map((r) => r.key)).toEqual(['old_1', 'old_2', 'old_3']);
      expect(await count(db, 'SELECT count(*) AS n FROM hookrun.cron_runs')).toBe(2);
      expect(await db.query('SELECT id, email FROM hookrun.users')).toEqual([{ id: 'user_old', email: 'old@example.com' }]);
      expect(await db.query('SELECT id, provider FROM hookrun.subscriptions')).toEqual([{ id: 'sub_old', provider: 'stripe' }]);
      // The sequences moved with their tables: new rows continue the old ids.
      expect(await storeEvent(db, 'auth', 'user.created', clerkUser('user.created', 'user_new', Date.now()))).toBe(4);
      expect(
        (await db.query<{ id: number }>(`INSERT INTO hookrun.cron_runs (job, trigger, status) VALUES ('nightly', 'manual', 'running') RETURNING id`))[0]!.id,
      ).toBe(3);
      await drain(testWorker(db).worker);
      expect(await count(db, `SELECT count(*) AS n FROM hookrun.users WHERE id = 'user_new'`)).toBe(1);
      expect(await count(db, `SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'public'`)).toBe(0);
      expect(await count(db, `SELECT count(*) AS n FROM pg_namespace WHERE nspname = 'drizzle'`)).toBe(0); // it held hookrun's rows only
      expect(await count(db, 'SELECT count(*) AS n FROM hookrun.__drizzle_migrations')).toBe(1 + AFTER_BASELINE.length);
      expect(await schemaShape(db, 'hookrun')).toEqual(await schemaShape(fresh.db, 'hookrun'));
      expect(await db.migrate()).toEqual({ applied: [], movedFromPublic: [] });
    } finally {
      await db.close();
      await handle.drop();
    }
  });

  it("applies the previous release's migrations it had not yet applied, then moves: the same tables as a fresh database", async () => {
    const handle = await store.create();
    await handle.legacy(6); // made by a release that knew 0000-0005: no event_attempts, no order_key, no provider columns
    const db = await handle.open();
    try {
      expect((await db.migrate()).movedFromPublic).toHaveLength(ALL_TABLES);
      expect(await schemaShape(db, 'hookrun')).toEqual(await schemaShape(fresh.db, 'hookrun'));
      expect(await count(db, 'SELECT count(*) AS n FROM hookrun.webhook_events WHERE order_key IS NULL')).toBe(3);
    } finally {
      await db.close();
      await handle.drop();
    }
  });

  it('moves into HOOKRUN_SCHEMA when one is configured, and runs there', async () => {
    const handle = await store.create();
    await handle.legacy();
    const db = await handle.open({ schema: 'acme_hooks' });
    try {
      expect((await db.migrate()).movedFromPublic).toHaveLength(ALL_TABLES);
      expect(await count(db, `SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'acme_hooks'`)).toBe(
        await count(fresh.db, `SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'hookrun'`),
      );
      expect(await count(db, `SELECT count(*) AS n FROM pg_namespace WHERE nspname = 'hookrun'`)).toBe(0);
      expect(await storeEvent(db, 'auth', 'user.created', clerkUser('user.created', 'user_new', Date.now()))).toBe(4); // SQL names hookrun.…; the driver rewrites it
      await drain(testWorker(db).worker);
      expect(await count(db, `SELECT count(*) AS n FROM acme_hooks.users`)).toBe(2);
      expect(await schemaShape(db, 'acme_hooks')).toEqual(await schemaShape(fresh.db, 'hookrun'));
    } finally {
      await db.close();
      await handle.drop();
    }
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("three instances starting at once on a previous release's PostgreSQL", { timeout: 60_000 }, () => {
  it('one moves the tables, the others wait for it and find nothing to do', async () => {
    const empty = await createEmptyPostgresDatabase();
    await makeLegacyPostgres(empty.url);
    const dbs = await Promise.all([1, 2, 3].map(() => openDatabase({ databaseUrl: empty.url })));
    try {
      const reports = await Promise.all(dbs.map((db) => db.migrate()));
      expect(reports.map((r) => r.movedFromPublic.length).sort()).toEqual([0, 0, ALL_TABLES]);
      expect(await count(dbs[0]!, 'SELECT count(*) AS n FROM hookrun.webhook_events')).toBe(3);
      expect(await count(dbs[0]!, 'SELECT count(*) AS n FROM hookrun.__drizzle_migrations')).toBe(1 + AFTER_BASELINE.length);
    } finally {
      await Promise.all(dbs.map((db) => db.close()));
      await empty.drop();
    }
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)(
  'a product database that already has users, customers and pages in public (PostgreSQL)',
  { timeout: 60_000 },
  () => {
    it("hookrun migrates into its own schema and runs; the product's tables, rows and drizzle bookkeeping are untouched", async () => {
      const empty = await createEmptyPostgresDatabase();
      const product = new pg.Client({ connectionString: empty.url });
      await product.connect();
      const productState = async () => ({
        users: (await product.query('SELECT * FROM public.users ORDER BY id')).rows,
        customers: (await product.query('SELECT * FROM public.customers ORDER BY id')).rows,
        pages: (await product.query('SELECT * FROM public.pages ORDER BY slug')).rows,
        drizzle: (await product.query('SELECT hash, created_at FROM drizzle.__drizzle_migrations ORDER BY id')).rows,
        tables: (await product.query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`)).rows,
      });
      let db: Database | undefined;
      try {
        await product.query(`CREATE TABLE public.users (id serial PRIMARY KEY, email text NOT NULL UNIQUE, plan text);
        CREATE TABLE public.customers (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), user_id int REFERENCES public.users(id), stripe_id text);
        CREATE TABLE public.pages (slug text PRIMARY KEY, body text);
        INSERT INTO public.users (email, plan) VALUES ('ada@product.example', 'pro'), ('bob@product.example', 'free');
        INSERT INTO public.customers (user_id, stripe_id) VALUES (1, 'cus_product');
        INSERT INTO public.pages VALUES ('home', 'Welcome');
        CREATE SCHEMA drizzle; CREATE TABLE drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint);
        INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('the-products-own-migration', 1999999999999);`);
        const before = await productState();
        db = await openDatabase({ databaseUrl: empty.url });
        expect((await db.migrate()).movedFromPublic).toEqual([]);
        await storeEvent(db, 'auth', 'user.created', clerkUser('user.created', 'user_1', Date.now(), { email: 'ada@product.example' }));
        await drain(testWorker(db).worker);
        expect(await db.query('SELECT id, email FROM hookrun.users')).toEqual([{ id: 'user_1', email: 'ada@product.example' }]);
        expect(await productState()).toEqual(before);
      } finally {
        await db?.close();
        await product.end();
        await empty.drop();
      }
    });
  },
);
