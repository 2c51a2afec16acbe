import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChangeCapture, STANDBY_POLL_MS, type ChangeCapture } from '../../src/changes/capture.js';
import type { ChangesSettings } from '../../src/config/config.js';
import type { Database } from '../../src/db/database.js';
import { ConfigError } from '../../src/errors.js';
import { HandlerRegistry } from '../../src/deliveries/registry.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { changesClusterAvailable, createSourceDatabase, type SourceDatabase } from '../helpers/changes-source.js';
import { databaseKinds, type TestDatabase } from '../helpers/db.js';
import { testConfig } from '../helpers/config.js';
import { drain, testWorker, waitFor } from '../inbox/fixtures.js';

const available = await changesClusterAvailable();

const SCHEMA = `
  CREATE TABLE profiles (id bigint PRIMARY KEY, name text, active boolean, score numeric, big bigint, data jsonb, seen_at timestamptz, bio text);
  CREATE TABLE orders (id int PRIMARY KEY, status text);
  ALTER TABLE orders REPLICA IDENTITY FULL;
  CREATE TABLE notes (body text);
  ALTER TABLE notes REPLICA IDENTITY FULL;
  CREATE TABLE items (id int PRIMARY KEY, n int NOT NULL);`;

function settingsFor(source: SourceDatabase): ChangesSettings {
  return testConfig(source.env).changes!;
}

/** The fields of a change event's payload the assertions read. */
interface ChangePayload {
  record: Record<string, unknown> & { bio?: string };
  old_record: unknown;
  commit_lsn: string;
  commit_time: string;
}

interface StoredChange {
  id: number;
  key: string;
  type: string;
  order_key: string;
  payload: ChangePayload;
}

async function storedChanges(db: Database, table?: string): Promise<StoredChange[]> {
  const rows = await db.query<StoredChange>(
    `SELECT id, key, type, order_key, payload FROM hookrun.webhook_events WHERE source = 'database' AND ($1::text IS NULL OR payload->>'table' = $1) ORDER BY id`,
    [table ?? null],
  );
  return rows.map((r) => ({ ...r, id: Number(r.id), payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload }));
}

describe.skipIf(!available).each(databaseKinds())('change capture into $name', (kind) => {
  let test: TestDatabase;
  let source: SourceDatabase;
  const captures: ChangeCapture[] = [];

  const capture = (wake: () => void = () => undefined) => {
    const made = createChangeCapture({ settings: settingsFor(source), db: test.db, log: silentLogger, metrics: new Metrics(), onStored: wake });
    captures.push(made);
    return made;
  };
  const countStored = async () => (await storedChanges(test.db)).length;

  beforeAll(async () => {
    test = await kind.create();
    source = await createSourceDatabase(SCHEMA, ['profiles', 'orders', 'notes', 'items']);
  });
  afterAll(async () => {
    await Promise.all(captures.map((c) => c.stop()));
    await source?.close();
    await test?.close();
  });

  it('stores each committed row change once, shaped like a Supabase Database Webhook', async () => {
    const running = capture();
    await running.preflight();
    running.start();
    await waitFor(() => running.status().state === 'consuming', 10_000);

    const bio = "(SELECT string_agg(md5(i::text), '') FROM generate_series(1, 3000) i)"; // ~96 KB, stored out of line (TOAST)
    await source.transaction([
      [`INSERT INTO profiles VALUES (1, 'Ada', true, 12.50, 9007199254740993, '{"plan": "pro", "tags": [1, 2]}', '2026-05-01 12:00:00.123456+02', ${bio})`],
      ['INSERT INTO orders VALUES (7, $1)', ['open']],
      ['INSERT INTO notes VALUES ($1)', ['first']],
    ]);
    await source.transaction([["UPDATE profiles SET name = 'Ada L.' WHERE id = 1"], ["UPDATE orders SET status = 'paid' WHERE id = 7"]]);
    await source.transaction([['DELETE FROM profiles WHERE id = 1'], ['DELETE FROM orders WHERE id = 7']]);
    await waitFor(async () => (await countStored()) === 7, 10_000);

    const [insert, update, remove] = await storedChanges(test.db, 'profiles');
    expect(insert!.type).toBe('INSERT');
    expect(insert!.payload).toMatchObject({
      type: 'INSERT',
      schema: 'public',
      table: 'profiles',
      old_record: null,
      record: {
        id: 1,
        name: 'Ada',
        active: true,
        score: 12.5,
        big: '9007199254740993',
        data: { plan: 'pro', tags: [1, 2] },
        seen_at: '2026-05-01T10:00:00.123456+00:00',
      },
    });
    expect(insert!.payload.record.bio).toHaveLength(96_000);
    expect(insert!.payload.commit_lsn).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    expect(Date.parse(insert!.payload.commit_time)).toBeGreaterThan(Date.now() - 60_000);
    expect(insert!.key).toMatch(new RegExp(`^wal:\\d+:${insert!.payload.commit_lsn.replace('/', '\\/')}:0$`));
    expect(insert!.order_key).toBe('public.profiles:[1]');

    // DEFAULT replica identity: no old row; the unchanged TOASTed column is named, not sent.
    expect(update!.payload).toMatchObject({ type: 'UPDATE', old_record: null, unchanged_toast: ['bio'], record: { id: 1, name: 'Ada L.' } });
    expect(update!.payload.record).not.toHaveProperty('bio');
    expect(remove!.payload).toMatchObject({ type: 'DELETE', record: null, old_record: { id: 1 } });
    expect(new Set([insert, update, remove].map((c) => c!.order_key))).toEqual(new Set(['public.profiles:[1]']));

    // FULL replica identity: the whole old row; the order key is still the primary key.
    const orders = await storedChanges(test.db, 'orders');
    expect(orders.map((c) => c.payload.old_record)).toEqual([null, { id: 7, status: 'open' }, { id: 7, status: 'paid' }]);
    expect(orders.map((c) => c.order_key)).toEqual(['public.orders:[7]', 'public.orders:[7]', 'public.orders:[7]']);
    // No key at all: the table's changes share one order.
    expect((await storedChanges(test.db, 'notes'))[0]!.order_key).toBe('public.notes:*');

    expect(running.status()).toMatchObject({ state: 'consuming', slot: source.slot, publication: 'hookrun_changes' });
    await running.refresh();
    expect(running.status().lagBytes).toEqual(expect.any(Number));
    await running.stop();
    expect(running.status().state).toBe('stopped');
  });

  it('catches up on what was committed while it was stopped, and stores nothing twice', async () => {
    const before = await countStored();
    for (let t = 0; t < 5; t++) {
      await source.transaction(Array.from({ length: 10 }, (_, i) => ['INSERT INTO items VALUES ($1, 0)', [t * 10 + i]] as [string, unknown[]]));
    }
    const running = capture();
    running.start();
    await waitFor(async () => (await countStored()) === before + 50, 15_000);
    await running.stop();
    const again = capture(); // a second read from the slot's position finds nothing new
    again.start();
    await waitFor(() => again.status().state === 'consuming', 10_000);
    await source.transaction([['UPDATE items SET n = 1 WHERE id = 0']]);
    await waitFor(async () => (await countStored()) === before + 51, 10_000);
    await again.stop();
    const keys = (await storedChanges(test.db)).map((c) => c.key);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('runs one row’s changes one at a time in commit order, through retries and parallel claims', async () => {
    await test.db.query(`UPDATE hookrun.webhook_events SET status = 'processed' WHERE source = 'database'`);
    await test.db.query(`DELETE FROM hookrun.new_events`);
    const seen = new Map<number, number[]>();
    const failedOnce = new Set<string>();
    const handle = async (ctx: { event: { key: string; payload: unknown } }) => {
      const { record, old_record } = ctx.event.payload as { record: { id: number; n: number } | null; old_record: { id: number } };
      const id = record?.id ?? old_record.id;
      // Every row's first update fails once: without the order rule, its later updates would overtake it.
      if (record?.n === 1 && !failedOnce.has(ctx.event.key)) {
        failedOnce.add(ctx.event.key);
        throw new Error('first try fails');
      }
      seen.set(id, [...(seen.get(id) ?? []), record ? record.n : -1]);
    };
    // A project handler on database events without flow options still takes each row's changes in order, per handler.
    const options = { name: 'items-sync', isolated: true };
    const handlers = new HandlerRegistry()
      .on('database', 'INSERT', handle, options)
      .on('database', 'UPDATE', handle, options)
      .on('database', 'DELETE', handle, options);
    const { worker, clock } = testWorker(test.db, { handlers, options: { batchSize: 50 } });
    const running = capture();
    running.start();
    await waitFor(() => running.status().state === 'consuming', 10_000);
    const before = await countStored();
    await source.transaction(Array.from({ length: 20 }, (_, i) => ['INSERT INTO items VALUES ($1, 0)', [100 + i]] as [string, unknown[]]));
    for (let n = 1; n <= 4; n++) await source.transaction([[`UPDATE items SET n = ${n} WHERE id >= 100`]]);
    await source.transaction([['DELETE FROM items WHERE id >= 110']]);
    await waitFor(async () => (await countStored()) === before + 20 + 80 + 10, 15_000);

    for (let round = 0; round < 20 && [...seen.values()].reduce((sum, l) => sum + l.length, 0) < 110; round++) {
      await Promise.all([drain(worker), drain(worker)]); // two claims side by side
      clock.advance(60 * 60 * 1000); // past any retry delay
    }
    expect(failedOnce.size).toBe(20);
    for (let id = 100; id < 120; id++) expect(seen.get(id), `row ${id}`).toEqual(id < 110 ? [0, 1, 2, 3, 4] : [0, 1, 2, 3, 4, -1]);
    await running.stop();
  });

  it('lets one capture stream the slot; another stands by and takes over when it stops', async () => {
    const first = capture();
    first.start();
    await waitFor(() => first.status().state === 'consuming', 10_000);
    const second = capture();
    second.start();
    await waitFor(() => second.status().state === 'standby', 10_000);

    const before = await countStored();
    await source.transaction(Array.from({ length: 10 }, (_, i) => ['INSERT INTO items VALUES ($1, 0)', [200 + i]] as [string, unknown[]]));
    await waitFor(async () => (await countStored()) === before + 10, 10_000);
    await first.stop();
    await waitFor(() => second.status().state === 'consuming', STANDBY_POLL_MS * 5);
    await source.transaction(Array.from({ length: 10 }, (_, i) => ['INSERT INTO items VALUES ($1, 0)', [210 + i]] as [string, unknown[]]));
    await waitFor(async () => (await countStored()) === before + 20, 10_000);
    await second.stop();
  });
});

describe.skipIf(!available)('change capture start-up checks', () => {
  const preflight = (env: Record<string, string>) =>
    createChangeCapture({
      settings: testConfig(env).changes!,
      db: undefined as never,
      log: silentLogger,
      metrics: new Metrics(),
      onStored: () => undefined,
    }).preflight();
  let source: SourceDatabase;
  beforeAll(async () => {
    source = await createSourceDatabase('CREATE TABLE t (id int PRIMARY KEY)', ['t']);
    await source.query(`DO $$ BEGIN CREATE ROLE hookrun_no_replication LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$`);
  });
  afterAll(async () => source?.close());

  it('refuses a database whose wal_level is not logical, naming the fix', async () => {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) return; // the main cluster (wal_level=replica) is what this checks against
    await expect(preflight({ CHANGES_DATABASE_URL: url, CHANGES_SLOT: source.slot })).rejects.toThrow(
      /wal_level is "replica", not "logical".*ALTER SYSTEM SET wal_level = logical/,
    );
  });

  it('refuses a missing publication and a user without REPLICATION', async () => {
    await expect(preflight({ ...source.env, CHANGES_PUBLICATION: 'nope' })).rejects.toThrow(/no publication "nope".*CREATE PUBLICATION nope FOR TABLE/);
    const user = new URL(source.url);
    user.username = 'hookrun_no_replication';
    const error = await preflight({ ...source.env, CHANGES_DATABASE_URL: user.toString() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/"hookrun_no_replication" may not replicate.*ALTER ROLE hookrun_no_replication WITH REPLICATION/);
  });

  it('warns (and alerts) once when the slot holds back more WAL than CHANGES_MAX_RETAINED_WAL_MB', async () => {
    const lines: string[] = [];
    const idle = createChangeCapture({
      settings: testConfig({ ...source.env, CHANGES_MAX_RETAINED_WAL_MB: '1' }).changes!,
      db: undefined as never,
      log: silentLogger,
      metrics: new Metrics(),
      onStored: () => undefined,
      onWalRetained: (line) => lines.push(line),
    });
    await idle.preflight(); // creates the slot; nothing streams it
    await idle.refresh();
    expect(lines).toEqual([]);
    await source.query(`CREATE TABLE filler AS SELECT md5(i::text) AS v FROM generate_series(1, 40000) i`); // ~3 MB of WAL
    await idle.refresh();
    await idle.refresh();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`slot ${source.slot} holds \\d+ MB of WAL \\(CHANGES_MAX_RETAINED_WAL_MB 1\\).*hookrun changes drop-slot`));
    expect(idle.status().retainedWalBytes).toBeGreaterThan(1024 * 1024);
    await idle.stop();
  });

  it('creates the slot when it is missing, and only logs when the database is down', async () => {
    await preflight(source.env);
    expect(await source.query('SELECT plugin FROM pg_replication_slots WHERE slot_name = $1', [source.slot])).toEqual([{ plugin: 'pgoutput' }]);
    await expect(preflight({ ...source.env, CHANGES_DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' })).resolves.toBeUndefined();
  });
});
