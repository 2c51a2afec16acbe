import { setAnswerDeadline } from '../deadline.js';
import type { Queryable } from './database.js';
import { digestRounds, insertWithDigestSql, SAME_BODY_LATE_SQL } from './event-digest-sql.js';
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
  /** A digest of the signed body (event-digest-sql.ts): an event with a new key and a body seen before is stored, marked as a suspected replay. */
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
  /** Row id; for a duplicate, the id of the row stored first (0 when retention deleted it and only its key is left). */
  id: number;
  duplicate: boolean;
  /** A new event whose body an earlier event of its source had (a suspected replay): that event's id. */
  sameBodyAs?: number;
}

type InsertedRow = { id: number | string; source: string; key: string; same_body_as?: number | string | null; claimed?: boolean };

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
   * The deadline is the database's: an answer that arrived while this
   * thread stalled is read before it is judged (setAnswerDeadline).
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
      if (deadlineMs !== undefined) timer = setAnswerDeadline(() => this.expire(pending, deadlineMs), deadlineMs);
      this.queue.push(pending);
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  /** Once committed or refused, `pending` is out of the queue and settled, and rejecting it does nothing. */
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
    // Only the key makes a duplicate; a repeated body is another event (event-digest-sql.ts).
    const firstByIdentity = new Map<string, Pending>();
    const repeats: Array<[Pending, Pending]> = [];
    for (const item of batch) {
      const id = identity(item.event);
      const first = firstByIdentity.get(id);
      if (first) repeats.push([item, first]);
      else firstByIdentity.set(id, item);
    }
    const idOf = new Map<string, number>();
    const rounds = digestRounds([...firstByIdentity.values()], ({ event }) =>
      event.bodyDigest === undefined ? undefined : `${event.source}\u0000${event.bodyDigest}`,
    );
    for (const round of rounds) if (round.length > 0) await this.insertRound(round, idOf);
    for (const [item, first] of repeats) item.resolve({ id: idOf.get(identity(first.event)) ?? 0, duplicate: true });
  }

  /** One statement for `unique` (distinct keys, distinct bodies); resolves each and records its id in `idOf`. */
  private async insertRound(unique: Pending[], idOf: Map<string, number>): Promise<void> {
    const slots = slotsFor(unique.length);
    const digests = unique.some((p) => p.event.bodyDigest !== undefined);
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
    const inserted = await this.db.query<InsertedRow>(digests ? insertWithDigestSql(slots) : insertSql(slots), params);
    const insertedIds = new Map(inserted.map((row) => [identity(row), Number(row.id)]));
    const sameBody = await this.sameBodies(unique, inserted);
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
      // A key retention kept after deleting its event has no row left to name: 0.
      const id = newId ?? existingIds.get(key) ?? 0;
      idOf.set(key, id);
      if (newId === undefined) item.resolve({ id, duplicate: true });
      else item.resolve(sameBody.has(newId) ? { id, duplicate: false, sameBodyAs: sameBody.get(newId)! } : { id, duplicate: false });
    }
  }

  /** New events' `same_body_as`, by id, with those another writer's row named after the statement (SAME_BODY_LATE_SQL). */
  private async sameBodies(unique: Pending[], inserted: InsertedRow[]): Promise<Map<number, number>> {
    const sameBody = new Map<number, number>();
    const late: Array<[number, string]> = [];
    const digestOf = new Map(unique.map((p) => [identity(p.event), p.event.bodyDigest]));
    for (const row of inserted) {
      if (row.same_body_as !== null && row.same_body_as !== undefined) sameBody.set(Number(row.id), Number(row.same_body_as));
      else if (row.claimed === false && digestOf.get(identity(row)) !== undefined) late.push([Number(row.id), digestOf.get(identity(row))!]);
    }
    if (late.length === 0) return sameBody;
    // The events are committed: a failure here leaves them unmarked, never unanswered.
    const named = await this.db
      .query<{ id: number; same_body_as: number }>(SAME_BODY_LATE_SQL, [late.map(([id]) => id), late.map(([, d]) => d)])
      .catch(() => []);
    for (const row of named) sameBody.set(Number(row.id), Number(row.same_body_as));
    return sameBody;
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
