import { systemClock } from '../src/clock.js';
import type { Database, Queryable } from '../src/db/database.js';
import { EventWriter } from '../src/db/event-writer.js';
import type { HandlerRegistry } from '../src/deliveries/registry.js';
import { createWorker, type Worker } from '../src/inbox/worker.js';
import pino from 'pino';
import { silentLogger, type Logger } from '../src/log.js';
import { Metrics } from '../src/metrics.js';
import { FLOW_SOURCE } from './flow-fill.js';

/** The in-process worker as `hookrun start` builds it (production defaults), with the given handlers. */
export function benchWorker(db: Database, handlers: HandlerRegistry, log: Logger = silentLogger): Worker {
  return createWorker({
    db,
    config: { maxAttempts: 10, leaseSeconds: 30, handlerTimeoutSeconds: 30, shutdownTimeoutMs: 8000 },
    clock: systemClock,
    log,
    metrics: new Metrics(),
    handlers,
  });
}

/** A logger that only counts what the worker logs at error level, keeping the first message. */
export function errorCounter(): { log: Logger; count: number; first?: string } {
  const counter: { log: Logger; count: number; first?: string } = { log: silentLogger, count: 0 };
  counter.log = pino(
    { level: 'error' },
    {
      write(line: string) {
        const entry = JSON.parse(line) as { msg?: string; err?: { message?: string } };
        counter.count += 1;
        counter.first ??= `${entry.msg ?? ''}: ${entry.err?.message ?? ''}`;
      },
    },
  );
  return counter;
}

/** Store `count` pending events of one type (tiny payloads, distinct keys) through the real group-commit writer. */
export async function storeEvents(db: Database, type: string, prefix: string, count: number): Promise<void> {
  const writer = new EventWriter(db);
  for (let done = 0; done < count; done += 5000) {
    const slice = Array.from({ length: Math.min(5000, count - done) }, (_, i) => done + i);
    await Promise.all(slice.map((n) => writer.write({ source: FLOW_SOURCE, key: `${prefix}-${n}`, type, payloadJson: `{"n":${n}}` })));
  }
}

/**
 * The first statement of each claim transaction names it: an inbox claim
 * (claimInbox) starts by taking new events from hookrun.new_events, a flow
 * claim (claimFlow) by locking its handler's row in hookrun.handler_controls.
 */
function claimKind(text: string): 'inbox' | 'flow' | undefined {
  if (/^\s*WITH taken AS \(\s*DELETE FROM hookrun\.new_events/.test(text)) return 'inbox';
  if (/^\s*INSERT INTO hookrun\.handler_controls/.test(text)) return 'flow';
  return undefined;
}

/**
 * The database with two stopwatches: each inbox claim transaction (new
 * events into deliveries, then the inline handlers' due ones) into `inbox`,
 * and each flow claim transaction into `flow`, connect to commit, as the
 * worker waits for them (the pool included).
 */
export function timedClaims(db: Database, inbox: number[], flow: number[]): Database {
  const transaction = async <T>(fn: (tx: Queryable) => Promise<T>): Promise<T> => {
    const started = performance.now();
    let kind: 'inbox' | 'flow' | undefined;
    let first = true;
    try {
      return await db.transaction((tx) =>
        fn({
          query: <R>(text: string, params?: unknown[]) => {
            if (first) kind = claimKind(text);
            first = false;
            return tx.query<R>(text, params);
          },
        }),
      );
    } finally {
      if (kind === 'inbox') inbox.push(performance.now() - started);
      if (kind === 'flow') flow.push(performance.now() - started);
    }
  };
  return { ...db, transaction };
}
