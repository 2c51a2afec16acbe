import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, symlinkSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { SECRETS } from './config.js';
import { cachedPgdata, copyPgdata } from './pglite-cache.js';
import { ensureDistBuilt } from './build-dist.js';
import { runCliInProcess, type CliResult } from './cli.js';
import { recordCapture } from './secret-scan.js';
import { pollUntil } from './poll.js';
import { TEST_NODE_FLAGS } from './projects.js';

/** Repo root: tests run from it, and `dist/main.js` lives under it. */
export const REPO_ROOT = resolve(import.meta.dirname, '..', '..');
const MAIN_JS = join(REPO_ROOT, 'dist', 'main.js');

/** How a spawned hookrun ended. */
export interface ExitResult {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A `hookrun start` child process with its captured output. */
export interface HookrunProcess {
  /** Base URL once listening (empty until then). */
  url: string;
  pid: number;
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves when the process has exited; rejects after `timeoutMs`. */
  waitForExit(timeoutMs: number): Promise<ExitResult>;
  /** Send a signal (kill -9 is `kill('SIGKILL')`). */
  kill(signal?: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL if it has not exited within `timeoutMs`; never throws. */
  stop(timeoutMs?: number): Promise<ExitResult>;
  exited: ExitResult | undefined;
}

/** What to start: env overrides on top of test secrets, and where the data lives. */
export interface SpawnOptions {
  env?: Record<string, string | undefined>;
  /** Embedded data dir (when no DATABASE_URL). */
  dataDir?: string;
  databaseUrl?: string;
  args?: string[];
  /** Wait for the "listening" log line and /ready 200 (default true). */
  waitReady?: boolean;
  readyTimeoutMs?: number;
  /** Another hookrun to run (an installed package's `dist/main.js`), from `cwd` (default: this repository's, from its root). */
  mainJs?: string;
  cwd?: string;
  /** A command to run hookrun under (e.g. strace and its options): `pid` is then the wrapper's, and hookrun's is in its log lines. */
  wrapper?: string[];
}

/** Node's flags for a spawned hookrun (test/helpers/projects.ts says why); a test that starts node itself passes them too. */
export { TEST_NODE_FLAGS };

/** The env every spawned hookrun gets: test secrets, loopback, a free port, JSON logs, no ready grace. */
export function baseEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    PAYMENTS_WEBHOOK_SECRET: SECRETS.payments,
    AUTH_WEBHOOK_SECRET: SECRETS.auth,
    DATABASE_WEBHOOK_SECRET: SECRETS.database,
    GITHUB_WEBHOOK_SECRET: SECRETS.github,
    SHOPIFY_WEBHOOK_SECRET: SECRETS.shopify,
    RESEND_WEBHOOK_SECRET: SECRETS.resend,
    TWILIO_AUTH_TOKEN: SECRETS.twilio,
    CRON_SECRET: SECRETS.cron,
    ADMIN_TOKEN: SECRETS.admin,
    // No load balancer watches a test's /ready: stop at once, as before the grace existed (ready-grace.test.ts runs with it).
    SHUTDOWN_READY_GRACE_MS: '0',
  };
}

/**
 * Start `node dist/main.js start` (or `args`) as a child process on a free
 * port, capture its output (also for the secret scan), and by default wait,
 * bounded, until it logs its URL and `/ready` answers 200.
 */
export async function spawnHookrun(options: SpawnOptions = {}): Promise<HookrunProcess> {
  if (!options.mainJs) await ensureDistBuilt();
  const env: Record<string, string> = { ...baseEnv() };
  if (options.dataDir) env.DATA_DIR = options.dataDir;
  if (options.databaseUrl) env.DATABASE_URL = options.databaseUrl;
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  const command = [...(options.wrapper ?? []), process.execPath, ...TEST_NODE_FLAGS, options.mainJs ?? MAIN_JS, ...(options.args ?? ['start'])];
  const child = spawn(command[0]!, command.slice(1), { cwd: options.cwd ?? REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: string[] = [];
  const capture = (data: Buffer) => {
    const text = data.toString('utf8');
    chunks.push(text);
    recordCapture(`hookrun pid ${child.pid}`, text);
  };
  child.stdout!.on('data', capture);
  child.stderr!.on('data', capture);
  const exitPromise = new Promise<ExitResult>((done) => child.once('exit', (code, signal) => done({ code, signal })));
  const proc: HookrunProcess = {
    url: '',
    pid: child.pid ?? -1,
    child,
    exited: undefined,
    output: () => chunks.join(''),
    waitForExit: (timeoutMs) =>
      Promise.race([
        exitPromise,
        new Promise<never>((_, reject) =>
          setTimeout(
            () => reject(new Error(`hookrun pid ${child.pid} still running after ${timeoutMs} ms\n--- its output ---\n${proc.output().slice(-3000)}`)),
            timeoutMs,
          ).unref(),
        ),
      ]),
    kill: (signal = 'SIGTERM') => {
      if (proc.exited === undefined) child.kill(signal);
    },
    async stop(timeoutMs = 10_000) {
      if (proc.exited) return proc.exited;
      child.kill('SIGTERM');
      try {
        return await proc.waitForExit(timeoutMs);
      } catch {
        child.kill('SIGKILL');
        return exitPromise;
      }
    },
  };
  void exitPromise.then((result) => (proc.exited = result));
  if (options.waitReady === false) return proc;

  const timeoutMs = options.readyTimeoutMs ?? 30_000;
  try {
    proc.url = await pollUntil('the "listening" log line', timeoutMs, async () => {
      if (proc.exited) throw new Error(`hookrun exited early (${JSON.stringify(proc.exited)})`);
      return /"url":"(http:\/\/[^"]+)"/.exec(proc.output())?.[1];
    });
    await pollUntil('/ready 200', timeoutMs, async () => {
      const res = await fetch(`${proc.url}/ready`).catch(() => undefined);
      await res?.arrayBuffer();
      return res?.status === 200 ? true : undefined;
    });
  } catch (error) {
    await proc.stop(2_000);
    throw new Error(`${(error as Error).message}\n--- hookrun output ---\n${proc.output().slice(-4000)}`);
  }
  return proc;
}

/** Run a hookrun command to completion (bounded) and return its exit and output. */
export async function runHookrun(options: SpawnOptions & { timeoutMs?: number }): Promise<ExitResult & { output: string }> {
  const proc = await spawnHookrun({ ...options, waitReady: false });
  try {
    const result = await proc.waitForExit(options.timeoutMs ?? 30_000);
    return { ...result, output: proc.output() };
  } finally {
    await proc.stop(2_000);
  }
}

/**
 * The migrated template unpacked into a data dir once, beside the dump the
 * global setup made (keyed as it is): seeding copies its files (~0.1 s)
 * instead of unpacking the dump through PGlite in the test process (~1 s of
 * CPU).
 */
let seededTemplate: Promise<string> | undefined;

async function unpackedTemplate(): Promise<string> {
  const { inject } = await import('vitest'); // lazy: the spawn helpers also work outside vitest (scratch scripts)
  const dump = inject('pgliteTemplate');
  return cachedPgdata(`${dump}.pgdata`, async () => ({ loadDataDir: new Blob([await readFile(dump)]) }));
}

/**
 * Fill `dataDir` with the migrated template the global setup dumped, so a
 * spawned embedded hookrun opens it in ~1 s instead of a 5-10 s first boot.
 */
export async function seedDataDir(dataDir: string): Promise<void> {
  await copyPgdata(await (seededTemplate ??= unpackedTemplate()), join(dataDir, 'pgdata'));
}

/** A copy of the project in `dir` to edit as a newcomer would (the docs' recipes), sharing this checkout's node_modules. */
export function copyProject(dir: string): void {
  for (const entry of ['src', 'drizzle', 'package.json', 'tsconfig.json', 'drizzle.config.ts', 'platform.json'])
    cpSync(join(REPO_ROOT, entry), join(dir, entry), { recursive: true });
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
}

/** Wait, bounded, until `probe` returns a value (poll every 50 ms). */
/** Re-exported for the tests that spawn hookrun and wait on it; the one implementation is helpers/poll.ts. */
export { pollUntil };

/** Run `hookrun <args>` to completion, in-process (helpers/cli.ts), with the test env plus `env`, from the repository root; its exit code and output. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCliInProcess(args, { ...baseEnv(), ...env }, REPO_ROOT);
}
