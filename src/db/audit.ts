import type { Queryable } from './database.js';

/** How an action ended: done, refused before it began (the role may not act), or failed (the answer says why). */
export type AuditOutcome = 'ok' | 'refused' | 'failed';

/** Where an action came from. */
export type AuditVia = 'console' | 'api' | 'cli';

/** One action as the audit records it. */
export interface AuditEntryInput {
  operator: string;
  role: string;
  via: AuditVia;
  action: string;
  target: string | null;
  outcome: AuditOutcome;
  detail: string | null;
}

/** One recorded action, as the console and `GET /api/audit` list it. */
export interface AuditEntry extends AuditEntryInput {
  id: number;
  at: Date;
}

/** What to list: newest first, before a cursor, optionally one operator's, one action's or one outcome's. */
export interface AuditFilter {
  limit: number;
  before?: number;
  operator?: string;
  action?: string;
  outcome?: AuditOutcome;
}

/** Longest detail kept: an error message, never a body. */
const MAX_DETAIL_CHARS = 500;

/** Record one action (after it ran, outside its transaction, so a failed one is recorded too). */
export async function recordAudit(db: Queryable, entry: AuditEntryInput, now: Date): Promise<void> {
  await db.query(`INSERT INTO hookrun.audit_entries (at, operator, role, via, action, target, outcome, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
    now.toISOString(),
    entry.operator,
    entry.role,
    entry.via,
    entry.action,
    entry.target?.slice(0, 200) ?? null,
    entry.outcome,
    entry.detail?.slice(0, MAX_DETAIL_CHARS) ?? null,
  ]);
}

/** The audit, newest first, by the filter. */
export async function listAudit(db: Queryable, filter: AuditFilter): Promise<AuditEntry[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (filter.before !== undefined) add('id < ?', filter.before);
  if (filter.operator !== undefined) add('operator = ?', filter.operator);
  if (filter.action !== undefined) add('action = ?', filter.action);
  if (filter.outcome !== undefined) add('outcome = ?', filter.outcome);
  params.push(filter.limit);
  const rows = await db.query<AuditEntry & { id: number | string; at: Date | string }>(
    `SELECT id, at, operator, role, via, action, target, outcome, detail FROM hookrun.audit_entries
     ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${params.length}`,
    params,
  );
  return rows.map((row) => ({ ...row, id: Number(row.id), at: new Date(row.at) }));
}

/** Delete up to `limit` audit entries older than `before` (retention); returns how many. */
export async function trimAudit(db: Queryable, before: Date, limit: number): Promise<number> {
  const rows = await db.query<{ n: number | string }>(
    `WITH gone AS (DELETE FROM hookrun.audit_entries WHERE id IN (
       SELECT id FROM hookrun.audit_entries WHERE at < $1::timestamptz ORDER BY id LIMIT $2) RETURNING 1)
     SELECT count(*) AS n FROM gone`,
    [before.toISOString(), limit],
  );
  return Number(rows[0]?.n ?? 0);
}
