import { createHash } from 'node:crypto';

const planOnce = new Set<string>();

/**
 * Mark a statement whose one plan suits any parameters (its joins go by
 * primary or unique keys, whatever the tables' sizes), so it may be prepared
 * (`DATABASE_PREPARED_STATEMENTS`); returns it. A statement that is not marked
 * is planned on every run: a queue's `LIMIT $1 … SKIP LOCKED` or a join whose
 * best plan depends on how many rows a table holds right now would otherwise
 * keep the generic plan PostgreSQL made once, however wrong it becomes.
 */
export function plannedOnce(sql: string): string {
  planOnce.add(sql);
  return sql;
}

/** Whether `sql` (before the schema rewrite) was marked by plannedOnce. */
export const isPlannedOnce = (sql: string): boolean => planOnce.has(sql);

/**
 * Names for the statements marked by plannedOnce, so node-postgres prepares
 * each once per connection and then only binds and executes it (PostgreSQL
 * skips the parse and, after a few runs, the planning), with
 * DATABASE_PREPARED_STATEMENTS=on. Prepared statements live as long as their
 * connection, so the set is bounded: the first `limit` distinct texts get
 * names (the hot ones are seen first and forever: ingest's size buckets,
 * the claim's delivery insert, the settle); any text past that runs unnamed.
 */
export class StatementNames {
  private readonly names = new Map<string, string>();

  constructor(private readonly limit = 64) {}

  /** The statement's name, or undefined when it runs unnamed. */
  nameOf(text: string): string | undefined {
    let name = this.names.get(text);
    if (name === undefined && this.names.size < this.limit) {
      name = `hookrun_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
      this.names.set(text, name);
    }
    return name;
  }
}
