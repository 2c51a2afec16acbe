import { ConfigError } from './errors.js';

/**
 * Start-up failures a new user meets, said as what to set: a port in use
 * (`PORT`), a PostgreSQL server out of reach, a database that does not exist
 * or refuses the credentials (`DATABASE_URL`). Each becomes a ConfigError, so
 * main.ts prints one line and exits 78; never a stack trace, never the password.
 */

/** The answer to the HTTP server's `listen` failing: which port, and what to set. */
export function explainListenError(error: unknown, port: number, host: string | undefined): unknown {
  const code = (error as NodeJS.ErrnoException)?.code;
  const where = `${host ?? 'every interface'} port ${port}`;
  if (code === 'EADDRINUSE')
    return new ConfigError(
      `${where} is already in use (another hookrun, or another program, listens there): stop it, or set PORT to a free port (PORT=0 picks one).`,
    );
  if (code === 'EACCES') return new ConfigError(`${where} needs privileges this process lacks: set PORT to 1024 or above.`);
  if (code === 'EADDRNOTAVAIL') return new ConfigError(`HOST=${host} is not an address of this machine: set HOST to one of its addresses, or leave it unset.`);
  return error;
}

/** Where DATABASE_URL points, for messages: host, port and database, never the user's password. */
function describeTarget(databaseUrl: string): { server: string; database: string } {
  try {
    const url = new URL(databaseUrl);
    return { server: `${url.hostname || 'localhost'}:${url.port || '5432'}`, database: decodeURIComponent(url.pathname.slice(1)) || '(the user name)' };
  } catch {
    return { server: 'the DATABASE_URL server', database: 'the DATABASE_URL database' };
  }
}

/** The answer to the first query on DATABASE_URL failing: which server or database, and that DATABASE_URL is what to fix. */
export function explainDatabaseError(error: unknown, databaseUrl: string): ConfigError {
  const { server, database } = describeTarget(databaseUrl);
  const code = (error as { code?: string })?.code;
  let password = '';
  try {
    password = decodeURIComponent(new URL(databaseUrl).password);
  } catch {
    // an unparsable URL: pg would have refused it before connecting
  }
  const said = ((error as Error)?.message ?? String(error)).split(password || '\u0000').join('***');
  if (code === '3D000')
    return new ConfigError(
      `PostgreSQL at ${server} has no database "${database}": create it (createdb ${database}, or CREATE DATABASE in psql), or set DATABASE_URL to an existing database.`,
    );
  if (code === '28P01' || code === '28000')
    return new ConfigError(`PostgreSQL at ${server} refused the credentials in DATABASE_URL (${said}): set DATABASE_URL with a user and password it accepts.`);
  if (/unsupported startup parameter/i.test(said))
    return new ConfigError(
      `${server} is a connection pooler that refuses the session settings hookrun sends at connect (${said}): set DATABASE_POOLER=transaction (or session, as its pool mode is), and DATABASE_DIRECT_URL to the database without the pooler.`,
    );
  return new ConfigError(
    `Cannot reach PostgreSQL at ${server} (${said}): start it, or set DATABASE_URL to a server that answers (without DATABASE_URL, hookrun uses its embedded database in DATA_DIR).`,
  );
}
