import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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

/**
 * Each project's setup: a folder for the run's tarball, removed at the end of
 * the run. The first test that wants the tarball packs it there
 * (helpers/packed-hookrun.ts); a run without such a test packs nothing.
 */
export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-pack-'));
  project.provide('packDir', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
