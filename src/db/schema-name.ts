/** The PostgreSQL schema hookrun's tables live in; the SQL in src/ names it literally (`hookrun.webhook_events`). */
export const DEFAULT_SCHEMA = 'hookrun';

/**
 * The `hookrun` qualifier in SQL text, and nothing else: quoted as drizzle-kit
 * writes it (`"hookrun"`), or bare and followed by `.` and a name
 * (`hookrun.webhook_events`, `NULL::hookrun.cron_runs`), never inside another
 * word (`myhookrun.x`, the NOTIFY channel `hookrun_events`), after a `.` or
 * right after a quote (`'hookrun.x'` stays text).
 */
const QUALIFIER = /"hookrun"|(?<![\w$."'])hookrun(?=\.[A-Za-z_"])/g;

/** At most this many distinct statement texts are remembered (hookrun's own are a few hundred). */
const MEMO_LIMIT = 2000;

/** Turns SQL written for schema `hookrun` into SQL for the configured one. */
export type SqlRewrite = (text: string) => string;

/** A schema name as an SQL identifier. */
export const quoteIdentifier = (name: string): string => `"${name.replaceAll('"', '""')}"`;

const unchanged: SqlRewrite = (text) => text;

/**
 * The rewrite for `schema` (HOOKRUN_SCHEMA, validated by config.ts): none for
 * the default, so it costs nothing; otherwise each statement text is rewritten
 * once and remembered.
 */
export function schemaRewrite(schema: string = DEFAULT_SCHEMA): SqlRewrite {
  if (schema === DEFAULT_SCHEMA) return unchanged;
  const quoted = quoteIdentifier(schema);
  const memo = new Map<string, string>();
  return (text) => {
    let rewritten = memo.get(text);
    if (rewritten === undefined) {
      rewritten = text.replace(QUALIFIER, quoted);
      if (memo.size < MEMO_LIMIT) memo.set(text, rewritten);
    }
    return rewritten;
  };
}
