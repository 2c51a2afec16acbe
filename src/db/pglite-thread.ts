import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { DurableNodeFS, durableStartParams } from './pglite-durable-fs.js';
import { serializeError, type ThreadData, type ThreadNotify, type ThreadReply, type ThreadRequest } from './pglite-thread-protocol.js';
import { JSON_PARSERS } from './stored-payload.js';

/**
 * The embedded database's own thread: PGlite (WebAssembly) runs here, so
 * HTTP parsing and signature checks on the main thread overlap with SQL on
 * two cores. It answers pglite-thread-client.ts's requests one message each;
 * PGlite's own mutexes order them (a query waits for an open transaction).
 */

/**
 * PGlite's own start parameters plus a smaller buffer pool: hookrun's working
 * set is small, and 16 MB instead of 128 MB saves ~50 MB of RSS and ~0.15 s
 * of start-up. Durable (the default, EMBEDDED_FSYNC=on): PostgreSQL's fsyncs
 * reach the disk (pglite-durable-fs.ts), so a commit's WAL is on disk before
 * its reply is posted; off: PGlite's defaults, whose fsync is a no-op.
 */
const START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];

/** Thrown inside `client.transaction` to make PGlite roll back on a `rollback` request. */
const ROLLBACK = Symbol('rollback');

interface OpenTransaction {
  tx: Transaction;
  end(commit: boolean): void;
  done: Promise<unknown>;
}

const port = parentPort!;
const { pgdata, fsync } = workerData as ThreadData;
const transactions = new Map<number, OpenTransaction>();
const subscriptions = new Map<number, () => Promise<void>>();

function reply(message: ThreadReply | ThreadNotify): void {
  port.postMessage(message);
}

async function begin(client: PGlite, id: number): Promise<void> {
  let began!: () => void;
  const started = new Promise<void>((resolve) => (began = resolve));
  const done = client.transaction(
    (tx) =>
      new Promise<void>((resolve, reject) => {
        transactions.set(id, { tx, done, end: (commit) => (commit ? resolve() : reject(ROLLBACK)) });
        began();
      }),
  );
  done.catch(() => undefined); // awaited by commit/rollback; a failed BEGIN is awaited just below
  await Promise.race([started, done]);
}

async function end(id: number, commit: boolean): Promise<void> {
  const open = transactions.get(id);
  if (!open) throw new Error('Transaction is closed');
  transactions.delete(id);
  open.end(commit);
  try {
    await open.done;
  } catch (error) {
    if (error !== ROLLBACK) throw error;
  }
}

async function run(client: PGlite, request: ThreadRequest): Promise<unknown[]> {
  switch (request.op) {
    case 'query': {
      if (request.tx === undefined) return (await client.query(request.text, request.params)).rows;
      const open = transactions.get(request.tx);
      if (!open) throw new Error('Transaction is closed');
      return (await open.tx.query(request.text, request.params)).rows;
    }
    case 'begin':
      await begin(client, request.tx);
      return [];
    case 'commit':
    case 'rollback':
      await end(request.tx, request.op === 'commit');
      return [];
    case 'listen': {
      const sub = request.sub;
      subscriptions.set(sub, await client.listen(request.channel, (payload) => reply({ notify: sub, payload })));
      return [];
    }
    case 'unlisten': {
      const unsubscribe = subscriptions.get(request.sub);
      subscriptions.delete(request.sub);
      await unsubscribe?.();
      return [];
    }
    case 'close':
      await client.close();
      return [];
  }
}

/**
 * Open PGlite and answer requests in arrival order. The listener is attached
 * before the open, not after: a worker thread whose event loop has nothing
 * pending (PGlite's wasm compile and its whole boot are promises, not libuv
 * work) ends its loop turn and waits in Node's `DrainTasks` for every
 * background task of the process, V8's TurboFan tier-up of PGlite's code
 * included, before it reads its next message: 0.4-1.1 s after each open here.
 */
function serve(): void {
  const opened = openClient();
  port.on('message', (request: ThreadRequest) => {
    opened
      .then((client) => run(client, request))
      .then((rows) => reply({ id: request.id, rows })) // a value that cannot be cloned throws here: answered as an error
      .catch((error: unknown) => reply({ id: request.id, error: serializeError(error) }));
  });
  opened.then(
    () => reply({ id: 0 }),
    (error: unknown) => reply({ id: 0, error: serializeError(error) }),
  );
}

async function openClient(): Promise<PGlite> {
  const client = fsync
    ? new PGlite({ fs: new DurableNodeFS(pgdata), startParams: durableStartParams(START_PARAMS), ...JSON_PARSERS })
    : new PGlite(pgdata, { startParams: START_PARAMS, ...JSON_PARSERS });
  await client.waitReady;
  return client;
}

serve();
