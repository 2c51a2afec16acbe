import type { Database, Queryable } from './database.js';
import { insertWithDigestSql } from './event-digest-sql.js';
import { INSERT_WIDTH, insertSql } from './event-insert-sql.js';
import { NotConfirmedError, NotStoredError, RejectedPayloadError } from './event-write-errors.js';
import { searchKeysOf } from './search-keys.js';

/** What a receiver hands over once a delivery is verified and parsed. */
export interface NewEvent {
  source: string;
  key: string;
  type: string;
  /** The verified raw JSON text, stored as it came (json), with the ids and emails it carries as its search keys. */
  payloadJson: string;
  /** A second unique key per source (event-digest-sql.ts): the same body under a new key is a duplicate. */
  bodyDigest?: string;
  /** The HTTP request it came in, kept beside it (event_requests); absent for events without one. */
  request?: KeptRequest;
}

/** A delivery's request as kept: masked headers as JSON, the body, how it was verified. */
export interface KeptRequest {
  headersJson: string;
  /** The raw body text; undefined when it is the payload text itself (JSON senders: sent to the database once). */
  body: string | undefined;
  verification: string;
}

/** The outcome of storing one delivery. */
export interface StoredEvent {
  /** Row id; for a duplicate, the id of the row stored first. */
  id: number;
  duplicate: boolean;
}

const MAX_BATCH_ROWS = 500;
/**
 * SQLSTATE classes of an error that one row's values cause (22: data exception, e.g. \u0000 in jsonb;
 * 23: integrity constraint; 54: program limit, e.g. an index row over its size): the rest of the
 * batch is innocent, so it is retried row by row and only that row is refused.
 */
const ROW_ERROR_CLASSES = ['22', '23', '54'];

/** The smallest power of two that holds `rows`: the insert's statement sizes (event-insert-sql.ts). */
function slotsFor(rows: number): number {
  let slots = 1;
  while (slots < rows) slots *= 2;
  return slots;
}

const FIND_SQL = `
  SELECT e.id, e.source, e.key FROM hookrun.webhook_events e
  JOIN unnest($1::text[], $2::text[]) AS u(s, k) ON e.source = u.s AND e.key = u.k`;

interface Pending {
  event: NewEvent;
  resolve: (stored: StoredEvent) => void;
  reject: (error: unknown) => void;
}

const identity = (e: { source: string; key: string }) => `${e.source}\u0000${e.key}`;

/**
 * Group commit for the inbox: concurrent `write()` calls are coalesced into one
 * multi-row `INSERT … ON CONFLICT DO NOTHING RETURNING`, flushed as soon as the
 * previous flush is done. Each promise resolves only after its row is committed,
 * so "durable before 2xx" holds while one commit pays for many requests.
 */
export class EventWriter {
  private queue: Pending[] = [];
  private flushing = false;
  private writing = 0;

  constructor(
    private readonly db: Queryable,
    private readonly onCommitted: (ids: number[]) => void = () => undefined,
  ) {}

  /** Deliveries waiting or being written: the in-process worker lets them go first on PGlite. */
  get queued(): number {
    return this.queue.length + this.writing;
  }

  /**
   * Store one event; resolves once it is committed (or found as a duplicate).
   * With `deadlineMs`, the promise rejects when the database has not
   * confirmed by then: with `NotStoredError` if the event still waited in the
   * queue (it is taken out and will never be written), with
   * `NotConfirmedError` if its INSERT was already sent (it may still commit).
   * One timer per write, no AbortController: this is the ingest hot path.
   */
  write(event: NewEvent, deadlineMs?: number): Promise<StoredEvent> {
    return new Promise((resolve, reject) => {
      // The first of commit, failure and deadline settles it; the timer goes with the first.
      let timer: NodeJS.Timeout | undefined;
      const pending: Pending = {
        event,
        resolve: (stored) => {
          clearTimeout(timer);
          resolve(stored);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      if (deadlineMs !== undefined) timer = setTimeout(() => this.expire(pending, deadlineMs), deadlineMs);
      this.queue.push(pending);
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private expire(pending: Pending, deadlineMs: number): void {
    const index = this.queue.indexOf(pending);
    if (index >= 0) {
      this.queue.splice(index, 1);
      pending.reject(new NotStoredError(`no answer from the database within ${deadlineMs} ms; the event was dropped from the queue`));
    } else {
      pending.reject(new NotConfirmedError(`no answer from the database within ${deadlineMs} ms; its insert was already sent`));
    }
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH_ROWS);
      this.writing = batch.length;
      await this.flush(batch);
      this.writing = 0;
    }
    this.flushing = false;
  }

  private async flush(batch: Pending[]): Promise<void> {
    try {
      await this.insertBatch(batch);
    } catch (error) {
      if (batch.length > 1 && isRowError(error)) {
        // One bad value fails the whole statement: retry row by row so only it is refused.
        for (const item of batch) {
          await this.insertBatch([item]).catch((rowError) => item.reject(asRejected(rowError)));
        }
        return;
      }
      for (const item of batch) item.reject(batch.length === 1 && isRowError(error) ? asRejected(error) : error);
    }
  }

  private async insertBatch(batch: Pending[]): Promise<void> {
    const firstByIdentity = new Map<string, Pending>();
    const firstByDigest = new Map<string, Pending>();
    const repeats: Array<[Pending, Pending]> = [];
    for (const item of batch) {
      const id = identity(item.event);
      const digest = item.event.bodyDigest === undefined ? undefined : `${item.event.source}\u0000${item.event.bodyDigest}`;
      const first = firstByIdentity.get(id) ?? (digest === undefined ? undefined : firstByDigest.get(digest));
      if (first) repeats.push([item, first]);
      else {
        firstByIdentity.set(id, item);
        if (digest !== undefined) firstByDigest.set(digest, item);
      }
    }
    const unique = [...firstByIdentity.values()];
    const slots = slotsFor(unique.length);
    const digests = firstByDigest.size > 0;
    const width = digests ? INSERT_WIDTH + 1 : INSERT_WIDTH;
    const params: Array<string | string[] | null> = new Array(slots * width).fill(null);
    for (let i = 0, p = 0; i < unique.length; i++) {
      const { source, key, type, payloadJson, bodyDigest, request } = unique[i]!.event;
      params[p++] = source;
      params[p++] = key;
      params[p++] = type;
      params[p++] = payloadJson;
      params[p++] = request?.headersJson ?? null;
      params[p++] = request?.body ?? null;
      params[p++] = request?.verification ?? null;
      params[p++] = searchKeysOf(payloadJson);
      if (digests) params[p++] = bodyDigest ?? null;
    }
    const inserted = await this.db.query<{ id: number; source: string; key: string }>(digests ? insertWithDigestSql(slots) : insertSql(slots), params);
    const insertedIds = new Map(inserted.map((row) => [identity(row), Number(row.id)]));
    const missing = unique.filter((p) => !insertedIds.has(identity(p.event)));
    const existingIds = new Map<string, number>();
    if (missing.length > 0) {
      const found = await this.db.query<{ id: number; source: string; key: string }>(FIND_SQL, [
        missing.map((p) => p.event.source),
        missing.map((p) => p.event.key),
      ]);
      for (const row of found) existingIds.set(identity(row), Number(row.id));
    }
    if (inserted.length > 0) {
      this.onCommitted(inserted.map((row) => Number(row.id)));
    }
    for (const item of unique) {
      const key = identity(item.event);
      const newId = insertedIds.get(key);
      if (newId !== undefined) item.resolve({ id: newId, duplicate: false });
      else item.resolve({ id: existingIds.get(key) ?? 0, duplicate: true });
    }
    for (const [item, first] of repeats) {
      const key = identity(first.event);
      item.resolve({ id: insertedIds.get(key) ?? existingIds.get(key) ?? 0, duplicate: true });
    }
  }
}

function isRowError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && ROW_ERROR_CLASSES.includes(code.slice(0, 2));
}

function asRejected(error: unknown): RejectedPayloadError {
  const detail = (error as Error | null)?.message ?? 'rejected by the database';
  return new RejectedPayloadError(`The payload cannot be stored: ${detail}.`, { cause: error });
}

const PROBE_ROLLBACK = new Error('readiness probe: rolled back on purpose');

/**
 * What `/ready` asks: would an inbox insert commit now? In a transaction it
 * takes the lock an INSERT takes on `webhook_events` (waiting at most
 * `lockTimeoutMs`) and reads whether the transaction may write, then rolls
 * back: a locked inbox or a read-only database fails it where `SELECT 1`
 * passes, and nothing is written (no row, no dead tuple: PGlite has no
 * autovacuum to clean up after a probe a second).
 */
export async function probeInboxInsert(db: Database, lockTimeoutMs: number): Promise<void> {
  try {
    await db.transaction(async (tx) => {
      await tx.query(`SELECT set_config('lock_timeout', $1, true)`, [`${lockTimeoutMs}ms`]);
      await tx.query('LOCK TABLE hookrun.webhook_events IN ROW EXCLUSIVE MODE');
      const [row] = await tx.query<{ readOnly: string }>(`SELECT current_setting('transaction_read_only') AS "readOnly"`);
      if (row?.readOnly === 'on') throw new Error('the database is read-only');
      throw PROBE_ROLLBACK;
    });
  } catch (error) {
    if (error !== PROBE_ROLLBACK) throw error;
  }
}
