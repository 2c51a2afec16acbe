import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runAuthDrain } from './auth-drain.js';
import { runCron } from './cron.js';
import { runFlow } from './flow.js';
import { BENCH_SECRET } from './events.js';
import { runIngest, type IngestFigures, type Target } from './ingest.js';
import { nextIngestTargets, type NextFirstRequest } from './next-target.js';
import { runLevers } from './levers.js';
import { runProcessing } from './processing.js';
import { formatReport, type BenchReport } from './report.js';
import { runScale } from './scale.js';
import { runSearch } from './search.js';
import { openDatabase } from '../src/db/client.js';
import {
  ROOT,
  backendCpu,
  cpuMs,
  createDatabase,
  processedTotal,
  settledTotal,
  startHello,
  startHookrun,
  startHookrunWorker,
  startVerifyCeiling,
  type ServerProcess,
} from './servers.js';
import { runStartup } from './startup.js';
import { baselineRoot } from './baseline.js';
import { runStorage } from './storage.js';
import { PGBOUNCER, startPgBouncer } from '../test/helpers/pgbouncer.js';

const { values: args } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    seconds: { type: 'string' },
    connections: { type: 'string', default: '50' },
    'no-build': { type: 'boolean', default: false },
    packed: { type: 'string' },
    skip: { type: 'string', default: '' },
    profile: { type: 'boolean', default: false },
    baseline: { type: 'string' },
    'scale-sizes': { type: 'string' },
    'search-events': { type: 'string' },
  },
});

const smoke = args.smoke!;
const rounds = Number(args.rounds ?? (smoke ? 1 : 3));
const seconds = Number(args.seconds ?? (smoke ? 1 : 10));
const connections = Number(args.connections);
const skip = new Set(args.skip!.split(',').filter(Boolean));
const databaseUrl = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || undefined;
const progress = (line: string) => process.stderr.write(`  ${line}\n`);

/** Run one section unless `--skip` names it, and say how long it took (where a run, the smoke run in CI too, spends its time). */
async function section(name: string, run: () => Promise<unknown>): Promise<void> {
  if (skip.has(name)) return;
  const started = performance.now();
  await run();
  progress(`${name}: the section took ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

function git(...argv: string[]): string {
  try {
    return execFileSync('git', argv, { cwd: ROOT }).toString().trim();
  } catch {
    return 'unknown';
  }
}

function build(): void {
  if (args['no-build']) return;
  try {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  } catch (error) {
    if (!existsSync(join(ROOT, 'dist/main.js'))) throw error;
    progress('warning: `npm run build` reported errors; benchmarking the emitted dist/ anyway');
  }
}

/** `--baseline` as built folders: each entry a built checkout or a git ref (built once in a temp dir, bench/baseline.ts). */
const baselineRoots = (args.baseline?.split(',').filter(Boolean) ?? []).map((spec) => ({ spec, root: baselineRoot(spec, ROOT, progress) }));

/** The hookrun builds in the rotation: this checkout, and older ones with `--baseline <dir or git ref>[,…]` (before/after in one run). */
function builds(): Array<{ label: string; root?: string }> {
  const list: Array<{ label: string; root?: string }> = [{ label: 'hookrun' }];
  baselineRoots.forEach(({ spec, root }) => list.push({ label: baselineRoots.length > 1 ? `baseline ${spec}` : 'baseline', root }));
  return list;
}

/** The ceilings hookrun is measured against: a hello-world server, signature verification alone, and verification plus one INSERT. */
async function ceilingTargets(servers: ServerProcess[], cleanups: Array<() => Promise<void>>): Promise<Target[]> {
  const hello = await startHello();
  servers.push(hello);
  const targets: Target[] = [{ name: 'hello-world', server: hello, path: '/', distinct: false }];
  const verify = await startVerifyCeiling(BENCH_SECRET);
  servers.push(verify);
  targets.push({ name: 'verify-only', server: verify, path: '/webhooks/payments', distinct: true });
  if (databaseUrl) {
    const ceilingDb = await createDatabase(databaseUrl, 'ceiling');
    cleanups.push(() => ceilingDb.drop());
    const verifyInsert = await startVerifyCeiling(BENCH_SECRET, ceilingDb.url);
    servers.push(verifyInsert);
    const ceilingObserver = await openDatabase({ databaseUrl: ceilingDb.url });
    cleanups.unshift(() => ceilingObserver.close());
    targets.push({ name: 'verify+insert', server: verifyInsert, path: '/webhooks/payments', distinct: true, databaseCpu: () => backendCpu(ceilingObserver) });
  }
  return targets;
}

async function ingestSection(): Promise<{ figures: IngestFigures[]; nextFirstRequest?: NextFirstRequest }> {
  const servers: ServerProcess[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  const nodeArgs = args.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(ROOT, 'bench/results/profiles')}`] : [];
  let nextFirstRequest: NextFirstRequest | undefined;
  try {
    const targets = await ceilingTargets(servers, cleanups);
    for (const build of builds()) {
      const dataDir = mkdtempSync(join(tmpdir(), 'hookrun-bench-ingest-'));
      cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
      // First boot (initdb) happens before the rounds, so peak RSS is the RSS under load.
      const first = await startHookrun({ kind: 'embedded', dataDir }, BENCH_SECRET, { root: build.root });
      await first.server.stop();
      const embedded = await startHookrun({ kind: 'embedded', dataDir }, BENCH_SECRET, { nodeArgs, root: build.root });
      servers.push(embedded.server);
      targets.push({
        name: `${build.label} embedded`,
        server: embedded.server,
        path: '/webhooks/payments',
        distinct: true,
        processedTotal: () => processedTotal(embedded.server),
      });
      if (databaseUrl) {
        const database = await createDatabase(databaseUrl, 'ingest');
        cleanups.push(() => database.drop());
        const postgres = await startHookrun({ kind: 'postgres', url: database.url }, BENCH_SECRET, { nodeArgs, root: build.root });
        servers.push(postgres.server);
        const observer = await openDatabase({ databaseUrl: database.url });
        cleanups.unshift(() => observer.close());
        targets.push({
          name: `${build.label} postgres`,
          server: postgres.server,
          path: '/webhooks/payments',
          distinct: true,
          databaseCpu: () => backendCpu(observer),
          processedTotal: () => processedTotal(postgres.server),
        });
        if (!build.root && PGBOUNCER) {
          // The same build through PgBouncer in transaction mode (DATABASE_POOLER=transaction, LISTEN over the direct URL):
          // what a pooler in front of PostgreSQL costs per request; PgBouncer's own CPU counts with the database's.
          const pooledDb = await createDatabase(databaseUrl, 'pooled');
          cleanups.push(() => pooledDb.drop());
          const pooler = await startPgBouncer('transaction', databaseUrl);
          cleanups.unshift(() => pooler.stop());
          const pooled = await startHookrun({ kind: 'postgres', url: pooler.through(pooledDb.url) }, BENCH_SECRET, {
            nodeArgs,
            env: { DATABASE_POOLER: 'transaction', DATABASE_DIRECT_URL: pooledDb.url },
          });
          servers.push(pooled.server);
          const pooledObserver = await openDatabase({ databaseUrl: pooledDb.url });
          cleanups.unshift(() => pooledObserver.close());
          targets.push({
            name: 'hookrun postgres, through PgBouncer',
            server: pooled.server,
            path: '/webhooks/payments',
            distinct: true,
            databaseCpu: async () => new Map([...(await backendCpu(pooledObserver)), [pooler.pid, cpuMs(pooler.pid)]]),
            processedTotal: () => processedTotal(pooled.server),
          });
        }
        // The same build mounted in a Next.js app (hookrun/next): receipt through Next's route handler, processing after each answer.
        const mounted = !build.root && !skip.has('next') ? await nextIngestTargets(databaseUrl, BENCH_SECRET, progress, args.packed) : undefined;
        if (mounted) {
          cleanups.unshift(mounted.cleanup);
          targets.push(...mounted.targets);
          nextFirstRequest = mounted.firstRequest;
        }
        if (!build.root) {
          // The same build split in two processes: `start --no-worker` receives, `worker` processes (the in-process worker's share, measured apart).
          const splitDb = await createDatabase(databaseUrl, 'split');
          cleanups.push(() => splitDb.drop());
          const receiver = await startHookrun({ kind: 'postgres', url: splitDb.url }, BENCH_SECRET, { nodeArgs, args: ['start', '--no-worker'] });
          servers.push(receiver.server);
          const worker = await startHookrunWorker({ kind: 'postgres', url: splitDb.url }, BENCH_SECRET, { nodeArgs });
          servers.push(worker);
          const splitObserver = await openDatabase({ databaseUrl: splitDb.url });
          cleanups.unshift(() => splitObserver.close());
          targets.push({
            name: 'hookrun postgres, worker apart',
            server: receiver.server,
            path: '/webhooks/payments',
            distinct: true,
            databaseCpu: () => backendCpu(splitObserver),
            processedTotal: () => settledTotal(splitObserver),
            workers: [worker],
          });
        }
      }
    }
    const figures = await runIngest(targets, { rounds, seconds, warmupSeconds: smoke ? 0 : 3, connections }, progress);
    return { figures, nextFirstRequest };
  } finally {
    for (const server of servers) await server.stop();
    for (const cleanup of cleanups) await cleanup();
  }
}

async function main(): Promise<void> {
  build();
  const report: BenchReport = {
    startedAt: new Date().toISOString(),
    mode: smoke ? 'smoke' : 'full',
    machine: {
      cpu: cpus()[0]?.model ?? 'unknown',
      cores: cpus().length,
      memoryGb: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      commit: git('rev-parse', '--short', 'HEAD'),
      dirty: git('status', '--porcelain', '--', 'src').length > 0,
    },
    settings: { rounds, seconds, connections, database: databaseUrl ? new URL(databaseUrl).host : undefined },
  };
  process.stderr.write(
    `hookrun bench (${report.mode}): ${rounds} rounds × ${seconds} s, ${connections} connections, PostgreSQL ${databaseUrl ? 'on' : 'off (set BENCH_DATABASE_URL)'}\n`,
  );
  await section('startup', async () => {
    report.startup = await runStartup(smoke ? 1 : 3, databaseUrl, progress);
    if (args.baseline) report.startupBaseline = await runStartup(smoke ? 1 : 3, databaseUrl, progress, baselineRoots[0]!.root);
  });
  await section('ingest', async () => {
    const ingest = await ingestSection();
    report.ingest = ingest.figures;
    report.nextFirstRequest = ingest.nextFirstRequest;
  });
  await section('processing', async () => {
    const sizes = smoke ? { backlog: 500, lightLoadEvents: 20 } : { backlog: 20_000, lightLoadEvents: 200 };
    report.processing = {
      embedded: await runProcessing('embedded', undefined, sizes, progress),
      postgres: await runProcessing('postgres', databaseUrl, sizes, progress),
    };
  });
  await section('storage', async () => {
    const events = smoke ? 2000 : 100_000;
    report.storage = [await runStorage('embedded', undefined, events, progress), await runStorage('postgres', databaseUrl, events, progress)].filter(
      (f) => f !== undefined,
    );
  });
  await section(
    'auth-drain',
    async () => (report.authDrain = await runAuthDrain(databaseUrl, builds(), { rounds, backlog: smoke ? 200 : 20_000, warmUp: !smoke }, progress)),
  );
  await section('levers', async () => (report.levers = await runLevers(databaseUrl, smoke ? 1 : 3, smoke ? 500 : 20_000, progress)));
  await section('scale', async () => {
    const sizes = (args['scale-sizes'] ?? (smoke ? '10000' : '1000000,5000000')).split(',').map(Number);
    if (sizes.some((n) => !Number.isInteger(n) || n < 0))
      throw new Error(`--scale-sizes takes whole numbers, e.g. 1000000,5000000 (got ${args['scale-sizes']})`);
    const ingest = { rounds, seconds, warmupSeconds: smoke ? 0 : 3, connections };
    report.scale = await runScale(databaseUrl, { sizes, backlog: smoke ? 500 : 20_000, drainRepeats: smoke ? 1 : 3, ingest, retentionFraction: 0.8 }, progress);
    if (!report.scale.available) progress(`scale: skipped: ${report.scale.reason}`);
  });
  await section('flow', async () => {
    const sizes = smoke
      ? { events: 500, deliveries: 20_000, keys: 200, goneKeys: 20_000, rounds, rate: { limit: 50, seconds: 3 } }
      : { events: 20_000, deliveries: 1_000_000, keys: 10_000, goneKeys: 1_000_000, rounds, rate: { limit: 50, seconds: 60 } };
    report.flow = await runFlow(databaseUrl, sizes, progress);
    if (!report.flow.available) progress(`flow: skipped: ${report.flow.reason}`);
  });
  await section('search', async () => {
    const events = Number(args['search-events'] ?? (smoke ? 20_000 : 1_000_000));
    if (!Number.isInteger(events) || events < 1) throw new Error(`--search-events takes a whole number, e.g. 1000000 (got ${args['search-events']})`);
    report.search = await runSearch(databaseUrl, { events, repeats: smoke ? 3 : 7 }, progress);
    if (!report.search.available) progress(`search: skipped: ${report.search.reason}`);
  });
  await section('cron', async () => (report.cron = await runCron(smoke ? 3 : 30, databaseUrl, progress)));

  process.stdout.write(formatReport(report));
  const dir = join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `bench-${report.startedAt.replace(/[:.]/g, '-')}${smoke ? '-smoke' : ''}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2));
  writeFileSync(join(dir, smoke ? 'latest-smoke.json' : 'latest.json'), JSON.stringify(report, null, 2));
  process.stderr.write(`wrote ${file}\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`bench failed: ${error.stack ?? error.message}\n`);
  process.exit(1);
});
