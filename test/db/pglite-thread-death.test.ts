import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { LOCK_FILE_NAME } from '../../src/db/data-dir-lock.js';
import { seedDataDir } from '../helpers/spawn-hookrun.js';

// Every Worker the code under test starts, so a test can kill the database thread. (A mock: this file runs with
// modules of its own, test/helpers/projects.ts.)
const threads = vi.hoisted(() => [] as import('node:worker_threads').Worker[]);
vi.mock('node:worker_threads', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:worker_threads')>();
  class RecordedWorker extends original.Worker {
    constructor(...args: ConstructorParameters<typeof original.Worker>) {
      super(...args);
      threads.push(this);
    }
  }
  return { ...original, Worker: RecordedWorker };
});

const root = mkdtempSync(join(tmpdir(), 'hookrun-pglite-thread-death-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the embedded database thread when it ends early', { timeout: 60_000 }, () => {
  it('a thread that dies rejects the queries in flight and every later one, and close() still releases the lock', async () => {
    const dataDir = join(root, 'killed');
    await seedDataDir(dataDir);
    const before = threads.length;
    const db = await openDatabase({ dataDir });
    const thread = threads[before]!;
    expect(thread).toBeDefined();
    const slow = db.query('SELECT pg_sleep(5)');
    const queued = db.query('SELECT 1');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    await thread.terminate();
    await expect(slow).rejects.toThrow(/embedded database thread exited/);
    await expect(queued).rejects.toThrow(/embedded database thread exited/);
    await expect(db.transaction(async () => 1)).rejects.toThrow(/embedded database thread exited/);
    expect(Date.now() - started).toBeLessThan(2_000);
    await db.close();
    expect(readFileSync(join(dataDir, LOCK_FILE_NAME), 'utf8')).toBe('');
  });

  it('a data dir PGlite cannot open: openDatabase rejects with its error, the thread ends and the lock is released', async () => {
    const dataDir = join(root, 'unopenable');
    await seedDataDir(dataDir);
    writeFileSync(join(dataDir, 'pgdata', 'PG_VERSION'), '99\n'); // a data dir of another PostgreSQL major version
    const before = threads.length;
    await expect(openDatabase({ dataDir })).rejects.toThrow(/PGlite failed to initialize/);
    const thread = threads[before]!;
    expect(thread.threadId).toBe(-1); // ended (a live thread has a positive id)
    expect(readFileSync(join(dataDir, LOCK_FILE_NAME), 'utf8')).toBe('');
  });
});
