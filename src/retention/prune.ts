import { setTimeout as delay } from 'node:timers/promises';
import type { RetentionDays } from '../config/config.js';
import type { Database } from '../db/database.js';
import { pruneSenderRejections } from '../issues/rejection-counter.js';
import { trimAudit } from '../db/audit.js';
import { countPrunable, deleteEvents, expireEventKeys, saveKeysOfOldEvents, trimCronRuns } from '../db/retention.js';

const DAY_MS = 86_400_000;
/** Rows per statement: each is a short transaction, so intake (PGlite's one session too) goes between them. */
const CHUNK_ROWS = 1000;
/** Events one pass deletes at most; the next pass takes the rest. */
const MAX_EVENTS_PER_PASS = 200_000;

/** What a prune deleted, or (dry run) would delete, and the cutoffs it used. */
export interface PruneReport {
  dryRun: boolean;
  events: number;
  dedupeKeys: number;
  cronRuns: number;
  /** The audit's entries (AUDIT_RETENTION_DAYS). */
  auditEntries: number;
  /** ISO times: rows older than these go; absent where retention is off (0 days). */
  cutoffs: { events?: string; dedupeKeys?: string; cronRuns?: string; auditEntries?: string };
}

/** Per-table deletions as they happen (metrics). */
export type OnDeleted = (table: 'webhook_events' | 'webhook_event_keys' | 'cron_runs' | 'audit_entries', rows: number) => void;

const cutoff = (now: number, days: number) => (days > 0 ? new Date(now - days * DAY_MS) : undefined);
const yieldToIntake = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number, signal?: AbortSignal) => delay(ms, undefined, { signal }).catch(() => undefined);

/** Delete in chunks until a chunk comes back short. */
async function drainInChunks(step: () => Promise<number>, signal: AbortSignal | undefined): Promise<number> {
  let total = 0;
  while (!signal?.aborted) {
    const n = await step();
    total += n;
    if (n < CHUNK_ROWS) return total;
    await yieldToIntake();
  }
  return total;
}

/**
 * Delete finished events older than EVENT_RETENTION_DAYS, keeping their keys.
 * Keys are saved first; the events go only after `longestStatementMs`, so an
 * insert that began before the keys were visible has ended by then, and a
 * late retry finds its key in one table or the other, never in neither.
 */
async function pruneEvents(db: Database, before: Date, keepKeysFrom: Date, onDeleted: OnDeleted, signal: AbortSignal | undefined): Promise<number> {
  const ids: number[] = [];
  let afterId = 0;
  while (ids.length < MAX_EVENTS_PER_PASS && !signal?.aborted) {
    const slice = await saveKeysOfOldEvents(db, { afterId, limit: CHUNK_ROWS, before, keepKeysFrom });
    ids.push(...slice.ids);
    if (slice.lastId === undefined || (slice.firstReceivedAt && slice.firstReceivedAt >= before)) break;
    afterId = slice.lastId;
    await yieldToIntake();
  }
  if (ids.length === 0) return 0;
  if (db.tuning.longestStatementMs > 0) await sleep(db.tuning.longestStatementMs, signal);
  let deleted = 0;
  for (let i = 0; i < ids.length && !signal?.aborted; i += CHUNK_ROWS) {
    const n = await deleteEvents(db, ids.slice(i, i + CHUNK_ROWS));
    deleted += n;
    onDeleted('webhook_events', n);
    await yieldToIntake();
  }
  return deleted;
}

/**
 * One retention pass (or, with `dryRun`, the counts it would delete): finished
 * events past EVENT_RETENTION_DAYS (their keys kept), saved keys past
 * DEDUPE_RETENTION_DAYS, finished cron runs past CRON_RUN_RETENTION_DAYS,
 * the audit's entries past AUDIT_RETENTION_DAYS.
 * Pending, failed and processing events are never deleted, however old.
 * `signal` ends a pass early (shutdown); saved keys without deletions are harmless.
 */
export async function prune(
  db: Database,
  days: RetentionDays,
  now: number,
  options: { dryRun?: boolean; onDeleted?: OnDeleted; signal?: AbortSignal } = {},
): Promise<PruneReport> {
  const events = cutoff(now, days.events);
  const keys = cutoff(now, days.dedupeKeys);
  const cronRuns = cutoff(now, days.cronRuns);
  const audit = cutoff(now, days.audit ?? 0);
  const cutoffs = { events: events?.toISOString(), dedupeKeys: keys?.toISOString(), cronRuns: cronRuns?.toISOString(), auditEntries: audit?.toISOString() };
  if (options.dryRun) return { dryRun: true, ...(await countPrunable(db, { events, keys, cronRuns, audit })), cutoffs };
  const onDeleted: OnDeleted = options.onDeleted ?? (() => undefined);
  const { signal } = options;
  const report: PruneReport = { dryRun: false, events: 0, dedupeKeys: 0, cronRuns: 0, auditEntries: 0, cutoffs };
  if (events) report.events = await pruneEvents(db, events, keys ?? new Date(0), onDeleted, signal);
  const drainTable = (table: 'webhook_event_keys' | 'cron_runs' | 'audit_entries', remove: () => Promise<number>) =>
    drainInChunks(async () => {
      const n = await remove();
      onDeleted(table, n);
      return n;
    }, signal);
  if (keys) report.dedupeKeys = await drainTable('webhook_event_keys', () => expireEventKeys(db, keys, CHUNK_ROWS));
  if (cronRuns) report.cronRuns = await drainTable('cron_runs', () => trimCronRuns(db, cronRuns, CHUNK_ROWS));
  if (audit) report.auditEntries = await drainTable('audit_entries', () => trimAudit(db, audit, CHUNK_ROWS));
  await pruneSenderRejections(db, now); // a week of per-minute counts, whatever the other settings
  return report;
}
