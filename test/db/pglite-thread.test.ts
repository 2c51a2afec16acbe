import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import type { Database } from '../../src/db/database.js';
import { LOCK_FILE_NAME } from '../../src/db/data-dir-lock.js';
import { countEventsByStatus } from '../../src/db/event-counts.js';
import { getEvent, listEvents } from '../../src/db/events.js';
import { createPgliteDatabase, type TestDatabase } from '../helpers/db.js';
import { REPO_ROOT, seedDataDir } from '../helpers/spawn-hookrun.js';

const root = mkdtempSync(join(tmpdir(), 'hookrun-pglite-thread-'));
const TYPES_SQL = `SELECT $1::timestamptz AS at, $2::jsonb AS doc, $3::int8 AS big, $4::bytea AS bytes, $5::text[] AS list, NULL::text AS nothing, $6::numeric AS amount`;
const TYPES_PARAMS = () => [
  new Date('2024-05-01T12:34:56.789Z'),
  { a: [1, 'two', { three: null }] },
  '9007199254740993',
  new Uint8Array([0, 1, 254, 255]),
  ['x', 'y'],
  '12.50',
];

/**
 * Seed a data dir named `name` and run a script in a fresh Node process (tsx):
 * `openDatabase` imported, then `body`, given the dir's path as a JS string literal.
 */
async function runInFreshProcess(name: string, body: (dataDirLiteral: string) => string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const dataDir = join(root, name);
  await seedDataDir(dataDir);
  const script = join(root, `${name}.mts`);
  writeFileSync(script, `import { openDatabase } from ${JSON.stringify(join(REPO_ROOT, 'src', 'db', 'client.ts'))};\n${body(JSON.stringify(dataDir))}`);
  const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, stdout, stderr };
}

/** Same rows in both databases, with fixed times, so the orm reads can be compared value for value. */
async function seedEvents(db: Database): Promise<void> {
  await db.query(`DELETE FROM hookrun.webhook_events WHERE source = 'thread-test'`);
  for (let i = 1; i <= 3; i++) {
    await db.query(
      `INSERT INTO hookrun.webhook_events (source, key, type, payload, status, received_at, next_attempt_at, processed_at)
       VALUES ('thread-test', $1, 'invoice.paid', $2::jsonb, $3, $4::timestamptz, $4::timestamptz, $5::timestamptz)`,
      [
        `k${i}`,
        JSON.stringify({ n: i, nested: { ok: true } }),
        i === 2 ? 'failed' : 'pending',
        `2024-01-0${i}T00:00:0${i}.123Z`,
        i === 3 ? '2024-02-01T00:00:00Z' : null,
      ],
    );
  }
}

afterAll(() => rmSync(root, { recursive: true, force: true }));

const withoutIds = <T extends { id: number }>(rows: T[]) => rows.map(({ id: _id, ...rest }) => rest);

describe('the embedded database on its own thread', { timeout: 60_000 }, () => {
  let db: Database;
  let inProcess: TestDatabase;
  const dataDir = join(root, 'main');

  beforeAll(async () => {
    await seedDataDir(dataDir);
    db = await openDatabase({ dataDir });
    await db.migrate();
    inProcess = await createPgliteDatabase();
  });

  afterAll(async () => {
    await db?.close();
    await inProcess?.close();
  });

  it('answers parameterised queries with the values in-process PGlite gives (Date, JSON, int8, bytea, arrays, NULL, numeric)', async () => {
    const [row] = await db.query<Record<string, unknown>>(TYPES_SQL, TYPES_PARAMS());
    const [expected] = await inProcess.db.query<Record<string, unknown>>(TYPES_SQL, TYPES_PARAMS());
    expect(row).toEqual(expected);
    expect(row!.at).toBeInstanceOf(Date);
    expect((row!.at as Date).toISOString()).toBe('2024-05-01T12:34:56.789Z');
    expect(row!.doc).toEqual({ a: [1, 'two', { three: null }] });
    expect(row!.bytes).toBeInstanceOf(Uint8Array);
    expect([...(row!.bytes as Uint8Array)]).toEqual([0, 1, 254, 255]);
    expect(row!.nothing).toBeNull();
    expect(typeof row!.big).toBe(typeof expected!.big); // whatever PGlite parses int8 to, the thread hands over the same
  });

  it('keeps the PostgreSQL error fields callers branch on (code, detail, constraint)', async () => {
    await db.query(`INSERT INTO hookrun.webhook_events (source, key, type, payload) VALUES ('thread-test', 'dup', 't', '{}')`);
    const error = await db
      .query(`INSERT INTO hookrun.webhook_events (source, key, type, payload) VALUES ('thread-test', 'dup', 't', '{}')`)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      code: '23505',
      constraint: 'webhook_events_source_key_uq',
      table: 'webhook_events',
      severity: 'ERROR',
      message: expect.stringContaining('duplicate key value violates unique constraint'),
      detail: expect.stringContaining('(source, key)=(thread-test, dup)'),
    });
    await expect(db.query('SELECT $1::int', ['not a number'])).rejects.toMatchObject({ code: '22P02' });
    await db.query(`DELETE FROM hookrun.webhook_events WHERE key = 'dup'`);
  });

  it('commits a transaction; a query outside it waits until it ends and then sees its row', async () => {
    const order: string[] = [];
    let outside: Promise<unknown> | undefined;
    await db.transaction(async (tx) => {
      await tx.query(`INSERT INTO hookrun.webhook_events (source, key, type, payload) VALUES ('thread-test', 'tx-commit', 't', '{}')`);
      outside = db.query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.webhook_events WHERE key = 'tx-commit'`).then((rows) => {
        order.push('outside');
        return rows[0]!.n;
      });
      await new Promise((resolve) => setTimeout(resolve, 150));
      order.push('transaction body done');
    });
    expect(await outside).toBe(1);
    expect(order).toEqual(['transaction body done', 'outside']);
  });

  it('rolls back when the function throws, rethrows its error, and the waiting outside query sees nothing', async () => {
    const thrown = new Error('handler failed');
    let outside: Promise<number> | undefined;
    const result = db.transaction(async (tx) => {
      await tx.query(`INSERT INTO hookrun.webhook_events (source, key, type, payload) VALUES ('thread-test', 'tx-rollback', 't', '{}')`);
      outside = db.query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.webhook_events WHERE key = 'tx-rollback'`).then((rows) => rows[0]!.n);
      const [inside] = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.webhook_events WHERE key = 'tx-rollback'`);
      expect(inside!.n).toBe(1);
      throw thrown;
    });
    await expect(result).rejects.toBe(thrown);
    expect(await outside).toBe(0);
  });

  it('runs concurrent transactions one after the other, as PGlite does in-process', async () => {
    const steps: string[] = [];
    const run = (name: string) =>
      db.transaction(async (tx) => {
        steps.push(`${name} begin`);
        await tx.query('SELECT 1');
        await new Promise((resolve) => setTimeout(resolve, 50));
        await tx.query('SELECT 2');
        steps.push(`${name} end`);
        return name;
      });
    expect(await Promise.all([run('a'), run('b')])).toEqual(['a', 'b']);
    expect(steps).toEqual(['a begin', 'a end', 'b begin', 'b end']);
  });

  it('a statement that fails inside a transaction aborts it: COMMIT answers 25P02, as in-process', async () => {
    const attempt = (target: Database) =>
      target
        .transaction(async (tx) => {
          await tx.query('SELECT 1/0').catch(() => undefined); // swallowed: the transaction is aborted all the same
        })
        .catch((e: { code?: string }) => e.code);
    expect(await attempt(db)).toBe(await attempt(inProcess.db));
    expect(await attempt(db)).toBe('25P02');
  });

  it('delivers NOTIFY to a listener until it unsubscribes', async () => {
    const received: string[] = [];
    const unsubscribe = await db.listen('thread_test_channel', (payload) => received.push(payload));
    await db.query(`SELECT pg_notify('thread_test_channel', 'one')`);
    await db.transaction(async (tx) => void (await tx.query(`SELECT pg_notify('thread_test_channel', 'two')`)));
    await vi.waitFor(() => expect(received).toEqual(['one', 'two']));
    await unsubscribe();
    await db.query(`SELECT pg_notify('thread_test_channel', 'three')`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(received).toEqual(['one', 'two']);
  });

  it('drizzle reads (events.ts) return the same values as the in-process pglite driver', async () => {
    await seedEvents(db);
    await seedEvents(inProcess.db);
    const page = await listEvents(db, { source: 'thread-test' });
    const expected = await listEvents(inProcess.db, { source: 'thread-test' });
    expect(withoutIds(page.events)).toEqual(withoutIds(expected.events));
    expect(page.events[0]!.receivedAt).toBeInstanceOf(Date);
    expect(page.events[0]!.receivedAt.toISOString()).toBe('2024-01-03T00:00:03.123Z');
    expect(page.events[0]!.processedAt).toEqual(new Date('2024-02-01T00:00:00Z'));
    const detail = await getEvent(db, page.events[0]!.id);
    const expectedDetail = await getEvent(inProcess.db, expected.events[0]!.id);
    expect({ ...detail, id: 0 }).toEqual({ ...expectedDetail, id: 0 });
    expect(detail!.payload).toEqual({ n: 3, nested: { ok: true } });
    expect(await getEvent(db, 987654321)).toBeUndefined();
    expect((await countEventsByStatus(db)).failed).toBeGreaterThanOrEqual(1);
  });
});

describe('opening, closing and losing the database thread', { timeout: 90_000 }, () => {
  it('initialises and migrates a fresh data dir in the thread (twice is harmless)', async () => {
    const dataDir = join(root, 'fresh');
    const db = await openDatabase({ dataDir, fsync: false });
    try {
      await db.migrate();
      await db.migrate();
      const tables = await db.query<{ name: string }>(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'hookrun'`);
      expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(['webhook_events', 'event_attempts', 'cron_runs']));
    } finally {
      await db.close();
    }
  });

  it('close() closes PGlite, ends the thread and releases the lock: a second open sees the data', async () => {
    const dataDir = join(root, 'reopen');
    await seedDataDir(dataDir);
    const first = await openDatabase({ dataDir });
    await first.query(`INSERT INTO hookrun.webhook_events (source, key, type, payload) VALUES ('thread-test', 'kept', 't', '{"kept":true}')`);
    expect(readFileSync(join(dataDir, LOCK_FILE_NAME), 'utf8')).toBe(String(process.pid));
    await first.close();
    await first.close(); // idempotent
    expect(readFileSync(join(dataDir, LOCK_FILE_NAME), 'utf8')).toBe('');
    await expect(first.query('SELECT 1')).rejects.toThrow(/closed/);
    const second = await openDatabase({ dataDir });
    try {
      expect(await second.query(`SELECT payload FROM hookrun.webhook_events WHERE key = 'kept'`)).toEqual([{ payload: { kept: true } }]);
    } finally {
      await second.close();
    }
  });

  it('answers its first request as soon as PGlite is open, not once V8 has finished compiling PGlite in the background', async () => {
    // In a fresh process: this one has compiled PGlite already, and V8 reuses that code, so nothing would be compiling.
    const run = await runInFreshProcess(
      'first-request',
      (dataDir) => `const started = performance.now();
       const db = await openDatabase({ dataDir: ${dataDir} });
       const opened = performance.now();
       await db.query('SELECT 1');
       console.log(JSON.stringify({ openMs: opened - started, firstMs: performance.now() - opened }));
       await db.close();`,
    );
    expect(run.code, run.stderr).toBe(0);
    const { openMs, firstMs } = JSON.parse(run.stdout) as { openMs: number; firstMs: number };
    // A thread that listened only after the open waited 0.4-1.1 s here (a third to a half of the open) before reading
    // its first request: its event loop had run dry and Node drained every background task first (pglite-thread.ts).
    expect(firstMs).toBeLessThan(openMs / 10);
  });

  it('an idle open database does not keep the process alive; a query in flight does', async () => {
    const run = await runInFreshProcess(
      'idle',
      (dataDir) => `const db = await openDatabase({ dataDir: ${dataDir} });
       db.query('SELECT pg_sleep(0.3) AS slept').then(() => console.log('answered'));`,
    );
    expect(run.stdout + run.stderr).toContain('answered');
    expect(run.code).toBe(0);
  });
});
