import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';

const execFileAsync = promisify(execFile);
const REPO_ROOT = resolve(import.meta.dirname, '..', '..');

/** Where the suite keeps what it makes once and reuses from run to run (keyed by what each depends on). */
export const TEST_CACHE = join(REPO_ROOT, 'node_modules', '.cache', 'hookrun-tests');

/** PGlite's installed version: a cached data dir or dump is only good for the PGlite that made it. */
export const PGLITE_VERSION = (
  JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8')) as { version: string }
).version;

/**
 * A PGlite data dir at `path`, as `new PGlite(path, await options())` leaves
 * it once ready and closed, made on first use (`options` is only called
 * then): whole or absent, even with forks making it at once (the first
 * rename wins, the others' copies are dropped).
 */
export async function cachedPgdata(path: string, options: () => Promise<PGliteOptions> | PGliteOptions = () => ({})): Promise<string> {
  if (existsSync(path)) return path;
  const partial = `${path}.${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  const pglite = new PGlite(partial, await options());
  await pglite.waitReady;
  await pglite.close();
  await rename(partial, path).catch(() => rm(partial, { recursive: true, force: true }));
  return path;
}

/** Copy a PGlite data dir's files into `pgdata` (~0.1 s, against seconds for PGlite to make or unpack one). */
export async function copyPgdata(from: string, pgdata: string): Promise<void> {
  await mkdir(pgdata, { recursive: true });
  await execFileAsync('cp', ['-R', `${from}/.`, pgdata]); // `dir/.`: its contents, with GNU's cp and BSD's
}
