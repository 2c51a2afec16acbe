/**
 * The first request to a fresh function instance that mounts hookrun/next:
 * each run is a new node process (bench/cold-start-child.mjs) that imports
 * the built route as `hookrun/next` resolves, builds it over a one-handler
 * project and PostgreSQL, and POSTs two signed Stripe events through it.
 * Medians of N runs on a migrated database (the usual cold start) and on a
 * fresh one (the first deploy, which migrates), then the module files loaded
 * by package. Needs `npm run build` first.
 *
 *   BENCH_DATABASE_URL=postgres://… npx tsx bench/cold-start.ts [--runs 5] [--js] [--profile]
 *
 * `--js` writes the handler as JavaScript (no tsx to load); `--profile` writes
 * a CPU profile of one more run (migrated database) to bench/results/profiles/.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildSample } from '../src/webhooks/samples.js';
import { BENCH_SECRET } from './events.js';
import { createDatabase, ROOT } from './servers.js';

const argv = process.argv.slice(2);
const runs = Number(argv[argv.indexOf('--runs') + 1] ?? 5) || 5;
const profile = argv.includes('--profile');
const javascript = argv.includes('--js');
const baseUrl = process.env.BENCH_DATABASE_URL;
if (!baseUrl) throw new Error('Set BENCH_DATABASE_URL to a PostgreSQL server this may create databases on.');

// The route as package.json's "exports" maps `hookrun/next` for import().
const route = join(ROOT, 'dist', 'next', 'route.js');
if (!existsSync(route)) throw new Error('No dist/next/route.js: run `npm run build` first.');
const work = mkdtempSync(join(tmpdir(), 'hookrun-cold-'));
const project = join(work, 'project');
mkdirSync(join(project, 'handlers'), { recursive: true });
if (javascript) writeFileSync(join(project, 'package.json'), '{ "type": "module" }\n');
writeFileSync(
  join(project, 'handlers', javascript ? 'checkout.js' : 'checkout.ts'),
  `import { defineHandler } from ${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'index.js')).href)};
export default defineHandler({
  on: ['stripe:checkout.session.completed'],
  async run(event, ctx) {
    await ctx.db.query('SELECT $1::text', [event.id]);
  },
});
`,
);

type Figures = Record<string, number>;
type Phases = Record<string, string[]>;

function child(databaseUrl: string, extra: { count?: boolean; profileDir?: string } = {}): string {
  const bodies = join(work, `bodies-${Date.now()}.json`);
  const out = join(work, `out-${Date.now()}.json`);
  const events = ['a', 'b'].map((n) => buildSample('payments', 'checkout.session.completed', { id: `evt_cold${n}${Date.now().toString(36)}` }));
  writeFileSync(bodies, JSON.stringify(events.map((event) => JSON.stringify(event))));
  const flags = extra.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${extra.profileDir}`] : [];
  const result = spawnSync(process.execPath, [...flags, join(ROOT, 'bench', 'cold-start-child.mjs')], {
    cwd: work,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: databaseUrl,
      PAYMENTS_WEBHOOK_SECRET: BENCH_SECRET,
      LOG_LEVEL: 'info',
      COLD_ROUTE: pathToFileURL(route).href,
      COLD_PROJECT: project,
      COLD_BODIES: bodies,
      COLD_OUT: out,
      ...(extra.count ? { COLD_COUNT_MODULES: '1' } : {}),
    },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0 || !existsSync(out)) throw new Error(`cold start run failed (${result.status}):\n${result.stderr}\n${result.stdout.slice(-2000)}`);
  return readFileSync(out, 'utf8');
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

function packageOf(path: string): string {
  const at = path.lastIndexOf('/node_modules/');
  if (at >= 0) {
    const [scope, name] = path.slice(at + '/node_modules/'.length).split('/');
    return scope!.startsWith('@') ? (scope === '@opentelemetry' ? scope : `${scope}/${name}`) : scope!;
  }
  if (path.startsWith(join(ROOT, 'dist') + '/')) return 'hookrun';
  if (path.startsWith(project + '/')) return '(project)';
  return '(other)';
}

function byPackage(files: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const file of new Set(files)) counts.set(packageOf(file), (counts.get(packageOf(file)) ?? 0) + 1);
  return new Map([...counts].sort((a, b) => b[1] - a[1]));
}

function summary(label: string, all: Figures[]): void {
  const keys = Object.keys(all[0]!);
  console.log(`\n${label}, median of ${all.length} (min–max):`);
  for (const key of keys) {
    const values = all.map((f) => f[key]!);
    console.log(`  ${key.padEnd(22)} ${median(values).toFixed(1).padStart(8)}  (${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)})`);
  }
}

const migrated: Figures[] = [];
const fresh: Figures[] = [];
const databases: Array<{ url: string; drop(): Promise<void> }> = [];
try {
  for (let i = 0; i < runs; i++) {
    const database = await createDatabase(baseUrl, 'cold');
    databases.push(database);
    fresh.push(JSON.parse(child(database.url)) as Figures);
    migrated.push(JSON.parse(child(database.url)) as Figures);
    console.error(`run ${i + 1}/${runs}: first request ${fresh.at(-1)!.firstMs!.toFixed(0)} ms fresh, ${migrated.at(-1)!.firstMs!.toFixed(0)} ms migrated`);
  }
  summary('Migrated database (the usual cold start)', migrated);
  summary('Fresh database (first deploy: migrates)', fresh);

  const phases = JSON.parse(child(databases[0]!.url, { count: true })) as Phases;
  console.log('\nModule files loaded by the end of each phase, by package:');
  const names = Object.keys(phases);
  const last = byPackage(phases[names.at(-1)!]!);
  const rows = [...last.keys()];
  console.log(`  ${'package'.padEnd(28)}${names.map((n) => n.padStart(16)).join('')}`);
  const tables = names.map((n) => byPackage(phases[n]!));
  for (const pkg of ['total', ...rows])
    console.log(
      `  ${pkg.padEnd(28)}${tables.map((t) => String(pkg === 'total' ? [...t.values()].reduce((a, b) => a + b, 0) : (t.get(pkg) ?? 0)).padStart(16)).join('')}`,
    );

  if (profile) {
    const dir = join(ROOT, 'bench', 'results', 'profiles');
    mkdirSync(dir, { recursive: true });
    child(databases[0]!.url, { profileDir: dir });
    console.log(`\nCPU profile written to ${dir}`);
  }
} finally {
  for (const database of databases) await database.drop();
  rmSync(work, { recursive: true, force: true });
}
