import pg from 'pg';
import { openDatabase } from '../../src/db/client.js';

/** Where a local PostgreSQL is expected when TEST_DATABASE_URL is not set (CI's and the README's). */
export const LOCAL_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** Whether a PostgreSQL answers at `url` (bounded: nothing listening answers at once, a firewall within 2 s). */
export async function postgresAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function admin<T>(baseUrl: string, body: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

/** `baseUrl` with another database name. */
export function databaseUrl(baseUrl: string, name: string): string {
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * A database migrated once per run (every migration in drizzle/), that each
 * test file's PostgreSQL database is copied from (`CREATE DATABASE … TEMPLATE`):
 * a copy takes a fraction of a migration. Returns its name.
 */
export async function createPostgresTemplate(baseUrl: string): Promise<string> {
  const name = `hookrun_template_${process.pid}`;
  await admin(baseUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name}`).then(() => client.query(`CREATE DATABASE ${name}`)));
  const db = await openDatabase({ databaseUrl: databaseUrl(baseUrl, name) });
  try {
    await db.migrate();
  } finally {
    await db.close();
  }
  return name;
}

/** Drop the template at the end of the run. */
export async function dropPostgresTemplate(baseUrl: string, name: string): Promise<void> {
  await admin(baseUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}
