import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';

const run = promisify(execFile);
const REPO_ROOT = resolve(import.meta.dirname, '..', '..');

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder the run's tarball is packed into, by the first test that wants it (helpers/packed-hookrun.ts). */
    packDir: string;
  }
}

/** What `npm pack` needs of this checkout; packed from a copy, so its build never empties the dist/ other tests run. */
const PACKED_FROM = [
  'src',
  'drizzle',
  'scripts',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'README.md',
  'LICENSE',
  'CHANGELOG.md',
  'docs',
];

/**
 * What a user installs, made once per run: a copy of this checkout, a file an
 * older build left in dist/ planted (the tarball must not carry it), then
 * `npm pack` with its scripts as a release runs them (`prepack` builds and
 * keeps `prepare` out of the packed package.json, `postpack` puts it back),
 * into `dir`. The bench packs with it too.
 */
export async function packCheckout(dir: string): Promise<{ tarball: string; files: string[] }> {
  const checkout = join(dir, 'checkout');
  for (const entry of PACKED_FROM) cpSync(join(REPO_ROOT, entry), join(checkout, entry), { recursive: true });
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(checkout, 'node_modules'), 'dir');
  mkdirSync(join(checkout, 'dist', 'cron', 'jobs'), { recursive: true });
  writeFileSync(join(checkout, 'dist', 'cron', 'jobs', 'ghost-job.js'), 'export default { run() {} };\n');
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir, '--loglevel=error'], {
    cwd: checkout,
    timeout: 420_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>;
  return { tarball: join(dir, packed!.filename), files: packed!.files.map((f) => f.path) };
}

/** The file in a run's pack folder that holds what was made once as `name` (`{ made }` or `{ error }`: helpers/packed-hookrun.ts writes it). */
export function madeFile(dir: string, name: string): string {
  return join(dir, `${name}.json`);
}

/** What a finished test run made once as `name` in its pack folder (`HOOKRUN_PACK_DIR`), or undefined when it made none. */
export function madeInRun<T>(dir: string, name: string): T | undefined {
  const file = madeFile(dir, name);
  if (!existsSync(file)) return undefined;
  const result = JSON.parse(readFileSync(file, 'utf8')) as { made?: T };
  return result.made;
}

/**
 * The run's setup: a folder for the run's tarball, removed at the end of the
 * run. The first test that wants the tarball packs it there
 * (helpers/packed-hookrun.ts); a run without such a test packs nothing.
 * With `HOOKRUN_PACK_DIR` (a folder that does not exist yet, or is empty) the
 * run packs there and keeps it: .ci/run hands it to the bench, which then
 * installs the same tarball without packing it again.
 */
export default function setup(project: TestProject): () => void {
  const kept = process.env.HOOKRUN_PACK_DIR;
  const dir = kept ? keptPackDir(kept) : mkdtempSync(join(tmpdir(), 'hookrun-pack-'));
  project.provide('packDir', dir);
  return () => {
    if (!kept) rmSync(dir, { recursive: true, force: true });
  };
}

const KEPT = Symbol.for('hookrun.test.keptPackDir');

/** `HOOKRUN_PACK_DIR`, made and found empty once per run (each project's setup asks for it). */
function keptPackDir(dir: string): string {
  const registry = globalThis as unknown as Record<symbol, string | undefined>;
  if (registry[KEPT] === dir) return dir;
  if (existsSync(dir) && readdirSync(dir).length > 0)
    throw new Error(`HOOKRUN_PACK_DIR=${dir} is not empty: give a folder that does not exist yet, so no earlier run's tarball is taken for this one's`);
  mkdirSync(dir, { recursive: true });
  registry[KEPT] = dir;
  return dir;
}
