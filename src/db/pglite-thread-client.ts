import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { threadId, Worker } from 'node:worker_threads';
import { MIGRATIONS_FOLDER, NOTHING_MIGRATED, type Database, type OpenOptions } from './database.js';
import { lockDataDir } from './data-dir-lock.js';
import { hasPendingMigrations } from './pending-migrations.js';
import { pgliteTuning } from './pglite-tuning.js';
import { DEFAULT_SCHEMA, schemaRewrite } from './schema-name.js';
import { rebuildError, type ThreadData, type ThreadNotify, type ThreadReply, type ThreadRequest } from './pglite-thread-protocol.js';

/** A request without its id (the connection numbers it). */
type Request = ThreadRequest extends infer R ? (R extends ThreadRequest ? Omit<R, 'id'> : never) : never;

interface Pending {
  resolve(rows: unknown[]): void;
  reject(error: Error): void;
}

/**
 * Start the database thread. Built (`dist/`): the sibling `.js`. From source
 * (tsx, vitest: this file's URL ends in `.ts`): the thread's script bundled
 * into one ES module (threadFromSource), since on Node 20 neither vitest's
 * transform, the parent's tsx hooks nor `execArgv: ['--import', 'tsx']`
 * reach a worker thread's modules (tried: "Unknown file extension .ts").
 */
function startThread(data: ThreadData): Worker {
  const script = import.meta.url.endsWith('.ts') ? threadFromSource() : new URL('./pglite-thread.js', import.meta.url);
  return new Worker(script, { workerData: data });
}

/** The one esbuild call this file makes (esbuild's own types are not a dependency of hookrun). */
interface EsbuildSync {
  buildSync(options: Record<string, unknown>): { outputFiles: Array<{ text: string }> };
}

let bundledThread: URL | undefined;

/**
 * The thread's TypeScript, bundled once per process by tsx's own esbuild
 * (packages left as imports) and written to `node_modules/.cache/hookrun/`,
 * named by its content, where its imports of packages resolve as the
 * sources' do. A thread that registered tsx and compiled each module through
 * its loader thread cost about 0.5 s of CPU more per start.
 */
function threadFromSource(): URL {
  if (bundledThread) return bundledThread;
  const tsxPackage = createRequire(import.meta.url).resolve('tsx/package.json');
  const esbuild = createRequire(tsxPackage)('esbuild') as EsbuildSync;
  const [output] = esbuild.buildSync({
    entryPoints: [fileURLToPath(new URL('./pglite-thread.ts', import.meta.url))],
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    write: false,
    logLevel: 'silent',
  }).outputFiles;
  const code = output!.text;
  const cache = join(dirname(dirname(tsxPackage)), '.cache', 'hookrun');
  const file = join(cache, `pglite-thread-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`);
  if (!existsSync(file)) {
    mkdirSync(cache, { recursive: true });
    const partial = `${file}.${process.pid}.${threadId}`;
    writeFileSync(partial, code);
    renameSync(partial, file); // whole or not at all for a process starting a thread from it at the same time
  }
  return (bundledThread = pathToFileURL(file));
}

/**
 * The main thread's end of the database thread: numbered requests, their
 * replies, notifications. A thread that dies (an uncaught error, an exit)
 * rejects every request in flight and every later one, so no caller hangs.
 */
class ThreadConnection {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** NOTIFY callbacks by subscription number. */
  readonly listeners = new Map<number, (payload: string) => void>();
  /** Why requests fail from now on: the thread died, or the database was closed. */
  failure: Error | undefined;
  /** Resolves when PGlite has opened the data dir in the thread (request 0). */
  readonly opened: Promise<unknown[]>;

  constructor(private readonly worker: Worker) {
    this.opened = new Promise((resolve, reject) => this.pending.set(0, { resolve, reject }));
    worker.on('message', (message: ThreadReply | ThreadNotify) => this.receive(message));
    worker.on('error', (error) => this.fail(new Error(`The embedded database thread failed: ${error.message}. Restart hookrun.`, { cause: error })));
    worker.on('exit', (code) => this.fail(new Error(`The embedded database thread exited (code ${code}). Restart hookrun.`)));
  }

  request(message: Request): Promise<unknown[]> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      try {
        this.worker.postMessage(Object.assign({ id }, message)); // not `{ ...message, id }`: about 2 µs more per query on Node 20
      } catch (error) {
        return reject(error as Error); // a parameter structured clone cannot copy (a function)
      }
      if (this.pending.size === 0) this.worker.ref(); // a request in flight keeps the process alive; an idle thread does not
      this.pending.set(id, { resolve, reject });
    });
  }

  /** Stop the thread; requests still in flight are rejected with `reason`. */
  async terminate(reason: Error): Promise<void> {
    this.fail(reason);
    await this.worker.terminate();
  }

  private receive(message: ThreadReply | ThreadNotify): void {
    if ('notify' in message) return this.listeners.get(message.notify)?.(message.payload);
    const pending = this.pending.get(message.id);
    if (!pending) return;
    this.pending.delete(message.id);
    if (this.pending.size === 0) this.worker.unref();
    if (message.error) pending.reject(rebuildError(message.error));
    else pending.resolve(message.rows ?? []);
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const pending of this.pending.values()) pending.reject(this.failure);
    this.pending.clear();
    this.worker.unref();
  }
}

/**
 * Open the embedded database in `dataDir/pgdata` on its own thread, behind
 * the same `Database` as in-process PGlite: the data-dir lock stays on this
 * thread; SQL, transactions, LISTEN, migrations and the fsyncs of each commit
 * (unless `fsync: false`) run in pglite-thread.ts. This thread never loads PGlite.
 */
export async function openPgliteThread(dataDir: string, options: Pick<OpenOptions, 'fsync' | 'schema'> = {}): Promise<Database> {
  const lock = await lockDataDir(dataDir);
  const pgdata = join(dataDir, 'pgdata');
  let thread: ThreadConnection | undefined;
  try {
    thread = new ThreadConnection(startThread({ pgdata, fsync: options.fsync !== false }));
    await thread.opened;
  } catch (error) {
    await thread?.terminate(new Error('The embedded database did not open.'));
    await lock.release();
    throw error;
  }
  const opened = thread;
  void lock.lost.then((error) => opened.terminate(error)); // another process could now open the dir: stop writing at once
  return wrapThread(thread, lock.release, options.schema ?? DEFAULT_SCHEMA);
}

function wrapThread(thread: ThreadConnection, release: () => Promise<void>, schema: string): Database {
  let nextTx = 1;
  let nextSub = 1;
  let closing: Promise<void> | undefined;
  const inSchema = schemaRewrite(schema); // here, not in the thread: the thread runs the text it is sent
  const query = async <T>(text: string, params?: unknown[]): Promise<T[]> => (await thread.request({ op: 'query', text: inSchema(text), params })) as T[];
  const db: Database = {
    kind: 'pglite',
    query,
    tuning: pgliteTuning({ query }),
    async transaction(fn) {
      const tx = nextTx++;
      await thread.request({ op: 'begin', tx });
      let result;
      try {
        result = await fn({
          query: async <T>(text: string, params?: unknown[]) => (await thread.request({ op: 'query', text: inSchema(text), params, tx })) as T[],
        });
      } catch (error) {
        await thread.request({ op: 'rollback', tx });
        throw error;
      }
      await thread.request({ op: 'commit', tx });
      return result;
    },
    async listen(channel, onNotify) {
      const sub = nextSub++;
      thread.listeners.set(sub, onNotify);
      try {
        await thread.request({ op: 'listen', channel, sub });
      } catch (error) {
        thread.listeners.delete(sub);
        throw error;
      }
      return async () => {
        thread.listeners.delete(sub);
        if (!thread.failure) await thread.request({ op: 'unlisten', sub }); // a closed or dead thread listens to nothing
      };
    },
    async migrate() {
      if (!(await hasPendingMigrations({ query }, MIGRATIONS_FOLDER))) return NOTHING_MIGRATED;
      const { applyMigrations } = await import('./migrator.js');
      return applyMigrations(db, schema, MIGRATIONS_FOLDER); // its transaction runs in the thread like any other
    },
    close: () =>
      (closing ??= (async () => {
        try {
          if (!thread.failure) await thread.request({ op: 'close' });
        } finally {
          await thread.terminate(new Error('The embedded database is closed.'));
          await release();
        }
      })()),
  };
  return db;
}
