import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The PostgreSQL with wal_level=logical that change-capture tests write to (test/helpers/changes-cluster.sh). */
export const CHANGES_BASE_URL = process.env.TEST_CHANGES_DATABASE_URL || 'postgres://postgres@127.0.0.1:5433/postgres';

/**
 * Whether that cluster is there. When it is not, say so loudly: the tests
 * that need it are skipped, and a green run must not hide that.
 */
export async function changesClusterAvailable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: CHANGES_BASE_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ wal_level: string }>('SHOW wal_level');
    if (rows[0]?.wal_level === 'logical') return true;
    console.warn(`\n  CHANGE CAPTURE TESTS SKIPPED: ${new URL(CHANGES_BASE_URL).host} has wal_level=${rows[0]?.wal_level}, not logical.\n`);
    return false;
  } catch (error) {
    console.warn(
      `\n  CHANGE CAPTURE TESTS SKIPPED: no PostgreSQL at ${new URL(CHANGES_BASE_URL).host} (${(error as Error).message}). Make one: sudo bash test/helpers/changes-cluster.sh\n`,
    );
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A product database of its own on the logical cluster, with a slot name no other test uses. */
export interface SourceDatabase {
  url: string;
  slot: string;
  /** CHANGES_* env for a hookrun that captures this database. */
  env: Record<string, string>;
  query<T extends pg.QueryResultRow = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** Run statements in one transaction (one commit in the WAL). */
  transaction(statements: Array<[string, unknown[]?]>): Promise<void>;
  close(): Promise<void>;
}

/** Create it with a publication over `tables` (created by `schemaSql`). */
export async function createSourceDatabase(schemaSql: string, tables: string[]): Promise<SourceDatabase> {
  const suffix = randomBytes(5).toString('hex');
  const name = `changes_${suffix}`;
  const slot = `hookrun_${suffix}`;
  const admin = new pg.Client({ connectionString: CHANGES_BASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(CHANGES_BASE_URL);
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
  await pool.query(schemaSql);
  await pool.query(`CREATE PUBLICATION hookrun_changes FOR TABLE ${tables.join(', ')}`);
  return {
    url: url.toString(),
    slot,
    env: { CHANGES_DATABASE_URL: url.toString(), CHANGES_SLOT: slot },
    query: async (text, params) => (await pool.query(text, params)).rows,
    async transaction(statements) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        for (const [text, params] of statements) await client.query(text, params);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async close() {
      await pool.end();
      const dropper = new pg.Client({ connectionString: CHANGES_BASE_URL });
      await dropper.connect();
      await dropper.query('SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active', [slot]);
      for (let i = 0; i < 50; i++) {
        try {
          await dropper.query('SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1', [slot]);
          break;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 100)); // its walsender is still exiting
        }
      }
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await dropper.end();
    },
  };
}
