import { ConfigError } from '../errors.js';
import { parseSetting, POSTGRES_URL, readOneOf, readOnOff, type Env } from './values.js';

/** `DATABASE_URL`: PostgreSQL, or undefined for the embedded database. */
export function readDatabaseUrl(env: Env): string | undefined {
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl)
    parseSetting(POSTGRES_URL, databaseUrl, 'DATABASE_URL must start with postgres:// or postgresql:// (unset it to use the embedded database).');
  return databaseUrl;
}

/**
 * What stands between hookrun and PostgreSQL. `transaction`: a pooler in
 * transaction mode (PgBouncer's pool_mode=transaction, Supabase's port 6543,
 * Neon's -pooler host), where a session's LISTEN and settings do not last;
 * `session`: a pooler in session mode; `none`: a direct connection.
 */
export interface PoolerSettings {
  mode: 'none' | 'session' | 'transaction';
  /** `DATABASE_DIRECT_URL`: the same database without the pooler, for LISTEN and migrations (as Prisma's `directUrl`). */
  directUrl: string | undefined;
}

/** `DATABASE_POOLER` and `DATABASE_DIRECT_URL`; both describe DATABASE_URL, so they need it. */
export function readPooler(env: Env, databaseUrl: string | undefined): PoolerSettings {
  const mode = readOneOf(
    env,
    'DATABASE_POOLER',
    ['none', 'session', 'transaction'],
    'none',
    `DATABASE_POOLER="${env.DATABASE_POOLER}" is not valid: use transaction (PgBouncer's pool_mode=transaction, Supabase's port 6543, Neon's -pooler host), session, or none (a direct connection, the default).`,
  );
  const directUrl = env.DATABASE_DIRECT_URL?.trim() || undefined;
  if (directUrl)
    parseSetting(
      POSTGRES_URL,
      directUrl,
      'DATABASE_DIRECT_URL must start with postgres:// or postgresql:// (the database DATABASE_URL reaches, without the pooler), or be unset.',
    );
  if ((mode !== 'none' || directUrl) && !databaseUrl)
    throw new ConfigError(
      'DATABASE_POOLER and DATABASE_DIRECT_URL describe DATABASE_URL, which is unset: set DATABASE_URL, or unset them (the embedded database needs neither).',
    );
  return { mode, directUrl };
}

/**
 * `DATABASE_PREPARED_STATEMENTS`: on by default, except behind a pooler in
 * transaction mode, which hands each transaction to whichever server
 * connection is free: a name prepared on one connection is missing on the
 * next, or already exists there (PostgreSQL's 42P05). Asked for there, it is
 * refused. An undeclared one is found at the first such answer
 * (db/postgres-database.ts turns them off).
 */
export function readPreparedStatements(env: Env, pooler: PoolerSettings): boolean {
  const on = readOnOff(env, 'DATABASE_PREPARED_STATEMENTS', pooler.mode !== 'transaction');
  if (on && pooler.mode === 'transaction')
    throw new ConfigError(
      'DATABASE_PREPARED_STATEMENTS=on does not work with DATABASE_POOLER=transaction: the pooler hands each transaction to another server connection, where a prepared statement is missing or "already exists", and those requests fail. Set DATABASE_PREPARED_STATEMENTS=off (its default there), or point DATABASE_URL at a direct connection (DATABASE_POOLER=none) or a pooler in session mode (DATABASE_POOLER=session).',
    );
  return on;
}
