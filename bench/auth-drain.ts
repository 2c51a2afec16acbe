import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import type { openDatabase } from '../src/db/client.js';
import type { Queryable } from '../src/db/database.js';
import type { EventWriter } from '../src/db/event-writer.js';
import { BENCH_SECRET, makeClerkEvents, type ClerkEvent } from './events.js';
import { makeFanOutProject, makeStepsProject } from './fan-out-project.js';
import { backendCpu, backendCpuSpent, cpuMs, createDatabase, processedTotal, ROOT, startHookrun, type Storage } from './servers.js';
import { spread, type Spread } from './stats.js';

/** One build's Clerk drain on one storage kind, over the rounds. */
export interface AuthDrainFigures {
  build: string;
  storage: Storage['kind'];
  backlog: number;
  drainPerSecond: Spread;
  /** hookrun's CPU per event from /ready to the last event processed, µs (embedded: the database runs in it). */
  hookrunUs: Spread;
  /** PostgreSQL's backends serving the database over the same span, µs per event (the bench's own connection left out). */
  databaseUs?: Spread;
  /** Whether users, organizations and memberships ended equal to the first build's after every drain. */
  mirrorsAsFirstBuild: boolean;
  /** A comparison row: each round's figure over another build's (`baseline`) in the same round (fan-out: over one handler per event; steps: over a plain handler). */
  over?: { baseline: string; drainPerSecond: Spread; hookrunUs: Spread; databaseUs?: Spread };
}

/** A build to drain with: a checkout (default: this one), optionally serving a project (`HOOKRUN_PROJECT`) with handlers of its own. */
export interface DrainBuild {
  label: string;
  root?: string;
  project?: string;
  /** Handlers that take each event (1: the shipped mirror alone); the embedded drain waits for this many outcomes per event. */
  handlersPerEvent?: number;
  /** The label of the build this one's figures are also given over, round by round. */
  over?: string;
}

type Sample = { perSec: number; hookrunUs: number; databaseUs: number; digest: string };

const MIRRORS = ['users', 'organizations', 'memberships'];

async function mirrorDigest(db: Queryable, schema: string): Promise<string> {
  const parts: string[] = [];
  for (const table of MIRRORS)
    parts.push((await db.query<{ d: string | null }>(`SELECT md5(string_agg(t::text, '|' ORDER BY id)) AS d FROM ${schema}.${table} t`))[0]!.d ?? '-');
  return parts.join(',');
}

/** The database modules of a build's own dist/: its layout (schema, migrations) is the one its server expects. */
type BuildDatabase = { openDatabase: typeof openDatabase; EventWriter: typeof EventWriter };

async function buildDatabase(root: string | undefined): Promise<BuildDatabase> {
  const dist = (file: string) => pathToFileURL(join(root ?? ROOT, 'dist', 'db', file)).href;
  const [client, writer] = await Promise.all([import(dist('client.js')), import(dist('event-writer.js'))]);
  return {
    openDatabase: (client as { openDatabase: typeof openDatabase }).openDatabase,
    EventWriter: (writer as { EventWriter: typeof EventWriter }).EventWriter,
  };
}

/** Write the backlog into a fresh storage of `kind` with the build's own group-commit writer; the database is closed after. */
async function fill(storage: Storage, events: ClerkEvent[], root: string | undefined): Promise<void> {
  const build = await buildDatabase(root);
  const db = await build.openDatabase(storage.kind === 'embedded' ? { dataDir: storage.dataDir } : { databaseUrl: storage.url });
  try {
    await db.migrate();
    const writer = new build.EventWriter(db);
    await Promise.all(events.map((e) => writer.write({ source: 'auth', key: e.id, type: e.type, payloadJson: e.body })));
  } finally {
    await db.close();
  }
}

/** Each build's migrated, empty data dir, made on its first embedded drain; `runAuthDrain` removes them. */
const emptyDataDirs = new Map<string, string>();

/**
 * A fresh embedded data dir for `root`'s build: a copy of its migrated, empty
 * one (`cp -R`, a tenth of a second) instead of an initdb and the migrations
 * for every drain (about 5 s each). What is copied holds no event.
 */
async function freshDataDir(root: string | undefined): Promise<string> {
  let template = emptyDataDirs.get(root ?? ROOT);
  if (!template) {
    template = mkdtempSync(join(tmpdir(), 'hookrun-bench-auth-empty-'));
    const db = await (await buildDatabase(root)).openDatabase({ dataDir: template });
    try {
      await db.migrate();
    } finally {
      await db.close();
    }
    emptyDataDirs.set(root ?? ROOT, template);
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'hookrun-bench-auth-'));
  execFileSync('cp', ['-R', `${template}/.`, dataDir]); // `dir/.`: its contents, with GNU's cp and BSD's
  return dataDir;
}

/**
 * One drain: the backlog written before `hookrun start` of `root`, then
 * waited for. CPU is counted from /ready (start-up left out) and divided by
 * the events processed after it; the rate is the rows' own processed_at span.
 */
async function drainOnce(kind: Storage['kind'], baseUrl: string | undefined, build: DrainBuild, events: ClerkEvent[]): Promise<Sample> {
  const root = build.root;
  // A build from before hookrun's own schema keeps its tables in public.
  const schema = existsSync(join(root ?? ROOT, 'dist', 'db', 'schema-name.js')) ? 'hookrun' : 'public';
  const dataDir = kind === 'embedded' ? await freshDataDir(root) : mkdtempSync(join(tmpdir(), 'hookrun-bench-auth-'));
  const database = kind === 'postgres' ? await createDatabase(baseUrl!, 'auth') : undefined;
  const storage: Storage = database ? { kind: 'postgres', url: database.url } : { kind: 'embedded', dataDir };
  const observer = database ? new pg.Client({ connectionString: database.url }) : undefined;
  try {
    await fill(storage, events, root);
    let observerPid = 0;
    let db: Queryable | undefined;
    if (observer) {
      await observer.connect();
      db = { query: async (text, params) => (await observer.query(text, params)).rows };
      observerPid = (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0]!.pid;
    }
    const serverCpu = async () => {
      const cpu = db ? await backendCpu(db) : new Map<number, number>();
      cpu.delete(observerPid);
      return cpu;
    };
    // /metrics counts each delivery's outcome: an event is done once each of its handlers has one.
    const processed = async () =>
      db
        ? Number(
            (
              await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.webhook_events WHERE status NOT IN ('pending', 'processing', 'failed')`)
            )[0]!.n,
          )
        : Math.floor((await processedTotal(server)) / (build.handlersPerEvent ?? 1));
    const { server } = await startHookrun(storage, BENCH_SECRET, { root, env: build.project ? { HOOKRUN_PROJECT: build.project } : undefined });
    let hookrunMs = 0;
    let databaseMs = 0;
    let counted = 0;
    try {
      const [cpuBefore, serverBefore, doneBefore] = [cpuMs(server.child.pid!), await serverCpu(), await processed()];
      let [done, last, lastChange] = [doneBefore, -1, performance.now()];
      while (done < events.length && performance.now() - lastChange < 10_000) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        done = await processed();
        if (done !== last) [last, lastChange] = [done, performance.now()];
      }
      hookrunMs = cpuMs(server.child.pid!) - cpuBefore;
      databaseMs = backendCpuSpent(serverBefore, await serverCpu());
      counted = done - doneBefore;
    } finally {
      await server.stop();
    }
    const opened = db ? undefined : await (await buildDatabase(root)).openDatabase({ dataDir });
    const check = db ?? opened!;
    try {
      const [row] = await check.query<{ n: number; span: number | string | null }>(
        `SELECT count(*)::int AS n, extract(epoch FROM max(processed_at) - min(processed_at)) * 1000 AS span FROM ${schema}.webhook_events WHERE status = 'processed'`,
      );
      if (row!.n !== events.length) {
        const statuses = await check.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM ${schema}.webhook_events GROUP BY status`);
        const deliveries =
          schema === 'hookrun'
            ? await check.query<{ status: string; n: number }>(
                `SELECT handler || ' ' || status || coalesce(' a' || attempts, '') AS status, count(*)::int AS n FROM hookrun.handler_deliveries WHERE status <> 'processed' GROUP BY 1
               UNION ALL SELECT 'new', count(*)::int FROM hookrun.new_events`,
              )
            : [];
        const by = [...statuses, ...deliveries].map((s) => `${s.status} ${s.n}`).join(', ');
        throw new Error(`auth drain: ${row!.n} of ${events.length} events processed (${root ?? 'this build'}, ${kind}; ${by})`);
      }
      return {
        perSec: (row!.n * 1000) / Number(row!.span),
        hookrunUs: (hookrunMs * 1000) / counted,
        databaseUs: (databaseMs * 1000) / counted,
        digest: await mirrorDigest(check, schema),
      };
    } finally {
      await opened?.close();
    }
  } finally {
    await observer?.end();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Section `auth-drain`: a backlog of Clerk events (the auth route's handlers
 * and mirror writes) drained by `hookrun start` of each build, embedded and
 * on PostgreSQL. The same events for every drain, each on a fresh database;
 * builds take turns (A B, then B A) for `rounds` rounds after an unrecorded
 * warm-up, so drift on a shared machine falls on both. The first build also
 * drains serving a project with two handlers of its own on every type (three
 * handlers per event), to show what fan-out costs: its figures over the
 * first build's, round by round (the same backlog, the same run).
 */
export async function runAuthDrain(
  databaseUrl: string | undefined,
  builds: DrainBuild[],
  /** `warmUp: false` (the smoke run, whose timings are not judged) leaves out the unrecorded warm-up drains. */
  options: { rounds: number; backlog: number; warmUp?: boolean },
  progress: (line: string) => void,
): Promise<AuthDrainFigures[]> {
  const kinds: Array<Storage['kind']> = databaseUrl ? ['embedded', 'postgres'] : ['embedded'];
  if (!databaseUrl) progress('auth-drain: PostgreSQL skipped (set BENCH_DATABASE_URL)');
  const events = makeClerkEvents(options.backlog);
  // Fan-out: this build again, serving a project with two handlers of its own beside the mirror (three per event).
  // Steps: a project handler of five no-op steps beside the mirror, over a plain project handler beside it.
  const types = events.map((e) => e.type);
  const first = builds[0]!.label;
  const projects = [makeFanOutProject(types, ROOT), makeStepsProject(types, ROOT, 0), makeStepsProject(types, ROOT, 5)];
  const plain = `${first}, a project handler`;
  builds = [
    ...builds,
    { label: `${first}, 3 handlers per event`, project: projects[0], handlersPerEvent: 3, over: first },
    { label: plain, project: projects[1], handlersPerEvent: 2 },
    { label: `${first}, a project handler of 5 steps`, project: projects[2], handlersPerEvent: 2, over: plain },
  ];
  const samples = new Map<string, Sample[]>();
  const key = (label: string, kind: string) => `${label}\u0000${kind}`;
  if (options.warmUp !== false)
    for (const kind of kinds) for (const build of builds) await drainOnce(kind, databaseUrl, build, events.slice(0, Math.min(events.length, 2000)));
  for (let round = 1; round <= options.rounds; round++) {
    const order = round % 2 === 1 ? builds : [...builds].reverse();
    for (const kind of kinds) {
      for (const build of order) {
        const sample = await drainOnce(kind, databaseUrl, build, events);
        samples.set(key(build.label, kind), [...(samples.get(key(build.label, kind)) ?? []), sample]);
        const db = kind === 'postgres' ? ` + PostgreSQL ${sample.databaseUs.toFixed(0)}` : '';
        progress(
          `auth-drain round ${round}/${options.rounds} ${build.label} ${kind}: ${sample.perSec.toFixed(0)} events/s, CPU µs/event hookrun ${sample.hookrunUs.toFixed(0)}${db}`,
        );
      }
    }
  }
  for (const project of projects) rmSync(project, { recursive: true, force: true });
  for (const template of emptyDataDirs.values()) rmSync(template, { recursive: true, force: true });
  emptyDataDirs.clear();
  return kinds.flatMap((kind) =>
    builds.map((build) => {
      const list = samples.get(key(build.label, kind)) ?? [];
      const digest = (samples.get(key(builds[0]!.label, kind)) ?? [])[0]?.digest;
      const baseline = samples.get(key(build.over ?? build.label, kind)) ?? [];
      const over = (pick: (s: Sample) => number) => spread(list.map((s, i) => pick(s) / pick(baseline[i]!)));
      return {
        build: build.label,
        storage: kind,
        backlog: events.length,
        drainPerSecond: spread(list.map((s) => s.perSec)),
        hookrunUs: spread(list.map((s) => s.hookrunUs)),
        databaseUs: kind === 'postgres' ? spread(list.map((s) => s.databaseUs)) : undefined,
        mirrorsAsFirstBuild: list.every((s) => s.digest === digest),
        over: build.over
          ? {
              baseline: build.over,
              drainPerSecond: over((s) => s.perSec),
              hookrunUs: over((s) => s.hookrunUs),
              databaseUs: kind === 'postgres' ? over((s) => s.databaseUs) : undefined,
            }
          : undefined,
      };
    }),
  );
}
