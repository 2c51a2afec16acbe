import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Queryable } from '../src/db/database.js';
import { freePort } from '../test/helpers/free-port.js';

/** Repository root (bench/ sits in it). */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLOCK_TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** A server process under test, with what the bench reads of it. */
export interface ServerProcess {
  name: string;
  url: string;
  child: ChildProcess;
  /** Last lines of its output, shown when it fails. */
  tail(): string;
  stop(): Promise<void>;
}

/** Server CPU time so far (user + system), in ms, from /proc/<pid>/stat. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); utime is field 14, stime field 15.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** CPU ms so far of each PostgreSQL backend connected to `db`'s database (the bench's own pool included). */
export async function backendCpu(db: Queryable): Promise<Map<number, number>> {
  const rows = await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()');
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      out.set(pid, cpuMs(pid));
    } catch {
      // ended in between
    }
  }
  return out;
}

/** CPU ms the backends spent between two `backendCpu` samples. */
export function backendCpuSpent(before: Map<number, number>, after: Map<number, number>): number {
  return [...after].reduce((sum, [pid, ms]) => sum + ms - (before.get(pid) ?? 0), 0);
}

/** Events settled (processed or dead), counted in the database: for targets whose processing happens outside the server's /metrics. */
export async function settledTotal(observer: { query<T>(sql: string): Promise<T[]> }): Promise<number> {
  const rows = await observer.query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.webhook_events WHERE status IN ('processed', 'dead')`);
  return Number(rows[0]!.n);
}

/** hookrun's `hookrun_events_processed_total` over every outcome, from its /metrics (the embedded database has no other reader). */
export async function processedTotal(server: ServerProcess): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('hookrun_events_processed_total{')) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** Resident set size now (VmRSS), in MB; sampled during load rounds for the peak under load. */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) / 1024 : NaN;
}

function spawnServer(name: string, args: string[], env: Record<string, string>, port: number, cwd: string = ROOT): ServerProcess {
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString().split('\n').filter(Boolean));
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    name,
    url: `http://127.0.0.1:${port}`,
    child,
    tail: () => lines.join('\n'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Poll `url` until it answers 200; returns ms since `startedAt`. Throws with the server's output on exit or deadline. */
export async function waitForOk(server: ServerProcess, path: string, startedAt: number, deadlineMs = 60_000): Promise<number> {
  for (;;) {
    if (server.child.exitCode !== null) throw new Error(`${server.name} exited with ${server.child.exitCode}:\n${server.tail()}`);
    try {
      const response = await fetch(server.url + path);
      await response.arrayBuffer();
      if (response.status === 200) return performance.now() - startedAt;
    } catch {
      // not listening yet
    }
    if (performance.now() - startedAt > deadlineMs) throw new Error(`${server.name} not ready after ${deadlineMs} ms:\n${server.tail()}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The plain node:http hello-world, started and ready. */
export async function startHello(): Promise<ServerProcess> {
  const server = spawnServer('hello-world', [fileURLToPath(new URL('./hello-server.mjs', import.meta.url))], {}, await freePort());
  await waitForOk(server, '/', performance.now());
  return server;
}

/**
 * The verify-only ceiling (`bench/verify-server.mjs`): read, verify with
 * stripe-node, parse, answer. With `databaseUrl`, one INSERT per request
 * before the answer (a hand-written receiver that stores, without batching).
 */
export async function startVerifyCeiling(secret: string, databaseUrl?: string): Promise<ServerProcess> {
  const name = databaseUrl ? 'verify+insert' : 'verify-only';
  const env: Record<string, string> = { PAYMENTS_WEBHOOK_SECRET: secret, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) };
  const server = spawnServer(name, [fileURLToPath(new URL('./verify-server.mjs', import.meta.url))], env, await freePort());
  await waitForOk(server, '/', performance.now());
  return server;
}

/** Where hookrun keeps its data in a run: a data dir (embedded) or a database URL. */
export type Storage = { kind: 'embedded'; dataDir: string } | { kind: 'postgres'; url: string };

/**
 * The environment `hookrun start` gets in the bench: the payments secret, logs
 * at info like production, and no ready grace on stop (no load balancer here
 * to take it out of rotation; with the default, each stop waits 5 s).
 */
export function hookrunEnv(storage: Storage, secret: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PAYMENTS_WEBHOOK_SECRET: secret,
    LOG_LEVEL: 'info',
    SHUTDOWN_READY_GRACE_MS: '0',
    ...(storage.kind === 'embedded' ? { DATA_DIR: storage.dataDir, DATABASE_URL: '' } : { DATABASE_URL: storage.url }),
    ...extra,
  };
}

/** How to start one hookrun: extra node flags, env, and which checkout (`--baseline` runs an older build). */
export interface StartOptions {
  nodeArgs?: string[];
  env?: Record<string, string>;
  /** A checkout with a built dist/ (default: this one). */
  root?: string;
  /** The command and its flags (default `start`). */
  args?: string[];
}

/** Spawn `node dist/main.js start` and measure spawn → `/ready` 200, in ms. */
export async function startHookrun(storage: Storage, secret: string, options: StartOptions = {}): Promise<{ server: ServerProcess; readyMs: number }> {
  const port = await freePort();
  const startedAt = performance.now();
  const server = spawnServer(
    `hookrun (${storage.kind})`,
    [...(options.nodeArgs ?? []), 'dist/main.js', ...(options.args ?? ['start'])],
    hookrunEnv(storage, secret, options.env),
    port,
    options.root ?? ROOT,
  );
  const readyMs = await waitForOk(server, '/ready', startedAt);
  return { server, readyMs };
}

/** Spawn `node dist/main.js worker` (no HTTP; it processes what a `start --no-worker` stores); ready once it logs that it runs. */
export async function startHookrunWorker(storage: Storage, secret: string, options: StartOptions = {}): Promise<ServerProcess> {
  const server = spawnServer(
    `hookrun worker (${storage.kind})`,
    [...(options.nodeArgs ?? []), 'dist/main.js', 'worker'],
    hookrunEnv(storage, secret, options.env),
    0,
    options.root ?? ROOT,
  );
  const startedAt = performance.now();
  while (!/hookrun worker running/.test(server.tail())) {
    if (server.child.exitCode !== null) throw new Error(`${server.name} exited with ${server.child.exitCode}:\n${server.tail()}`);
    if (performance.now() - startedAt > 60_000) throw new Error(`${server.name} did not start within 60 s:\n${server.tail()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return server;
}

/** A fresh, empty database on the PostgreSQL server of `baseUrl`; `drop()` removes it. */
export async function createDatabase(baseUrl: string, label: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `hookrun_bench_${label}_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: baseUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
