import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';
import { pollUntil } from './poll.js';

/** Debian's pgbouncer binary, or undefined when the package is not installed. */
export const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((p) => existsSync(p));

if (!PGBOUNCER) {
  if (process.env.CI === 'true') throw new Error('CI=true but pgbouncer is missing: .ci/run should have installed it (apt-get install -y pgbouncer).');
}

/** A PgBouncer of the test's own, in front of TEST_DATABASE_URL's server. */
export interface Pooler {
  /** PgBouncer's process id (its CPU, for the benchmark). */
  pid: number;
  /** `url` with the pooler's host and port instead of PostgreSQL's (same user and database). */
  through(url: string): string;
  stop(): Promise<void>;
}

/**
 * Start PgBouncer in `mode` (transaction, as Supabase's port 6543 and Neon's
 * pooled hosts are) on a free port, in a temp dir of its own; with
 * `ignoreStartupParameters`, it accepts those settings at connect and drops them. It refuses to
 * run as root, so as root it runs as the postgres user (PostgreSQL's own). Trust auth, as the
 * PostgreSQL behind it.
 */
export async function startPgBouncer(
  mode: 'transaction' | 'session' = 'transaction',
  target = process.env.TEST_DATABASE_URL!,
  options: { ignoreStartupParameters?: string[] } = {},
): Promise<Pooler> {
  if (!PGBOUNCER) throw new Error('pgbouncer is not installed (apt-get install -y pgbouncer)');
  const server = new URL(target);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-pgbouncer-'));
  chmodSync(dir, 0o755);
  const user = decodeURIComponent(server.username || 'postgres');
  writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`);
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      `pool_mode = ${mode}`,
      'max_client_conn = 400',
      'default_pool_size = 20',
      // As a pooler that takes settings at connect and drops them (Supavisor does): nothing then tells hookrun it is pooled.
      ...(options.ignoreStartupParameters ? [`ignore_startup_parameters = ${options.ignoreStartupParameters.join(',')}`] : []),
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const postgresUid = Number(/^postgres:[^:]*:(\d+):/m.exec(readFileSync('/etc/passwd', 'utf8'))?.[1]);
    for (const file of ['', 'users.txt', 'pgbouncer.ini']) chownSync(join(dir, file), postgresUid, -1);
  }
  const args = [join(dir, 'pgbouncer.ini')];
  // setpriv execs pgbouncer in its own place (no parent left between), so a signal to the child reaches it.
  const child: ChildProcess = asRoot
    ? spawn('setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', PGBOUNCER, ...args], { stdio: 'ignore' })
    : spawn(PGBOUNCER, args, { stdio: 'ignore' });
  let exited = false;
  child.once('exit', () => (exited = true));
  const url = new URL(target);
  url.port = String(port);
  url.hostname = '127.0.0.1';
  const log = () => (existsSync(join(dir, 'pgbouncer.log')) ? readFileSync(join(dir, 'pgbouncer.log'), 'utf8').slice(-2000) : '');
  await pollUntil(`pgbouncer on port ${port}`, 15_000, async () => {
    if (exited) throw new Error(`pgbouncer exited at start:\n${log()}`);
    const client = new pg.Client({ connectionString: url.toString() });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch {
      return undefined;
    } finally {
      await client.end().catch(() => undefined);
    }
  });
  return {
    pid: child.pid!,
    through(databaseUrl) {
      const pooled = new URL(databaseUrl);
      pooled.hostname = '127.0.0.1';
      pooled.port = String(port);
      return pooled.toString();
    },
    async stop() {
      if (!exited) {
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, 5_000))]);
        if (!exited) child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
