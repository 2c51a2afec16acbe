import type { Queryable, WorkerTuning } from './database.js';

/** A handler may hold the one session inside a shared batch this long before its type runs alone. */
const IN_TRANSACTION_BUDGET_MS = 1000;
/** The longest the worker lets the receivers' queued inserts go first before it claims anyway. */
const YIELD_TO_INGEST_MS = 200;
/** PGlite has no autovacuum: each event leaves two dead row versions (claim, settle) in the heap and indexes. */
const VACUUM_EVERY_EVENTS = 5000;

/**
 * How the inbox worker drives PGlite, on its own thread or in-process alike:
 * it is one session either way, so one lane and no overlapping statements.
 */
export function pgliteTuning(db: Queryable): WorkerTuning {
  return {
    lanes: 1, // one session: a second batch would only wait for the first
    longestStatementMs: 0, // one session: no statement ever overlaps another
    inTransactionBudgetMs: IN_TRANSACTION_BUDGET_MS,
    yieldToIngestMs: YIELD_TO_INGEST_MS,
    idleMaintenance: { every: VACUUM_EVERY_EVENTS, run: async () => void (await db.query('VACUUM hookrun.webhook_events')) },
  };
}
