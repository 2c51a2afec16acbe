import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { NEXT_PROJECT, buildNextApp, deployDocsNextConfig, installNextPackages, nextAppManifest } from './next-app.js';
import { linkTree } from './link-tree.js';
import { npm } from './npm.js';
import { madeFile, packCheckout } from './pack-once.js';
import { pollUntil } from './poll.js';

export { npm, NPM_FLAGS } from './npm.js';

/**
 * What a user installs: the tarball packed once for the run into the folder
 * pack-once.ts made. A file an older build left in dist/ was planted first:
 * the tarball must not carry it.
 */
export function packHookrun(): Promise<{ tarball: string; files: string[] }> {
  return madeOncePerRun('packed', (dir) => packCheckout(dir));
}

/**
 * The run's tarball installed into an empty folder (a package.json with
 * "type": "module" and nothing else), once for the run: what a user's first
 * `npm install hookrun` makes. Read only by its users; other installs of the
 * tarball start from it (`startFromInstall`).
 */
export function tarballInstalled(): Promise<{ tarball: string; installedIn: string }> {
  return madeOncePerRun('tarball-install', async (dir) => {
    const { tarball } = await packHookrun();
    const installedIn = join(dir, 'tarball-install');
    mkdirSync(installedIn);
    writeFileSync(join(installedIn, 'package.json'), JSON.stringify({ name: 'tool', private: true, type: 'module' }));
    await npm(['install', tarball], installedIn);
    return { tarball, installedIn };
  });
}

/**
 * Give `dir` (a folder with its package.json, no node_modules yet) the run's
 * tarball install as its starting node_modules, hard-linked: the `npm install`
 * that follows adds only what `dir` needs beyond it (a project made by
 * `hookrun init`: 10 packages beside 78, about 2 CPU-s against 9) and ends
 * with the tree and lockfile an install from nothing writes. npm's record of
 * the tree it installed is left out, so the install rewrites no file the two
 * share.
 */
export async function startFromInstall(dir: string): Promise<void> {
  const { installedIn } = await tarballInstalled();
  await linkTree(join(installedIn, 'node_modules'), join(dir, 'node_modules'));
  rmSync(join(dir, 'node_modules', '.package-lock.json'), { force: true });
}

/**
 * A folder where the run's tarball and the Next.js packages were installed
 * once (`installNextPackages`): each app the tests build copies it
 * (`buildNextApp`'s `installedIn`) instead of the same 20 s install again.
 */
export async function nextPackagesInstalled(): Promise<{ tarball: string; installedIn: string }> {
  const { tarball } = await packHookrun();
  const { installedIn } = await madeOncePerRun('next-install', async (dir) => {
    const installedIn = join(dir, 'next-install');
    mkdirSync(installedIn);
    writeFileSync(join(installedIn, 'package.json'), nextAppManifest());
    await startFromInstall(installedIn);
    await installNextPackages(installedIn, tarball);
    return { installedIn };
  });
  return { tarball, installedIn };
}

/**
 * The Next.js app the tests deploy, built at `app` from the run's install:
 * NEXT_PROJECT under `hookrun/`, docs/deploy.md's next.config.mjs, and a
 * package.json with `packageType` (none: as create-next-app writes it).
 */
export async function buildDeployedNextApp(app: string, packageType?: 'module'): Promise<void> {
  const { tarball, installedIn } = await nextPackagesInstalled();
  await buildNextApp(app, tarball, NEXT_PROJECT, { 'next.config.mjs': deployDocsNextConfig() }, packageType, installedIn);
}

/**
 * `buildDeployedNextApp` without "type", built once for the run. Served two
 * ways, by two files: `next start` from its folder (next-app.test.ts) and its
 * standalone output copied out (next-standalone.test.ts); each with its own
 * database and notes.
 */
export function nextAppBuilt(): Promise<{ app: string }> {
  return madeOncePerRun('next-app', async (dir) => {
    const app = join(dir, 'next-app');
    await buildDeployedNextApp(app);
    return { app };
  });
}

/**
 * What `make` makes in the run's pack folder, made once for the run by its
 * first caller (a `<name>.making` folder made there says who); the others
 * wait for its `<name>.json` (bounded) and read the same result or error.
 */
async function madeOncePerRun<T>(name: string, make: (dir: string) => Promise<T>): Promise<T> {
  const dir = inject('packDir');
  const done = madeFile(dir, name);
  if (claim(join(dir, `${name}.making`))) {
    try {
      writeFileSync(done, JSON.stringify({ made: await make(dir) }));
    } catch (error) {
      const { message, stdout, stderr } = error as { message: string; stdout?: string; stderr?: string };
      writeFileSync(done, JSON.stringify({ error: `${message}\n${stdout ?? ''}\n${stderr ?? ''}` }));
    }
  }
  await pollUntil(`${name} (made once for the run)`, 420_000, async () => (existsSync(done) ? true : undefined), 250);
  const result = JSON.parse(readFileSync(done, 'utf8')) as { made: T } | { error: string };
  if ('error' in result) throw new Error(`${name} failed: ${result.error}`);
  return result.made;
}

/** Whether this caller is the first: mkdir is atomic, so exactly one caller makes the folder. */
function claim(folder: string): boolean {
  try {
    mkdirSync(folder);
    return true;
  } catch {
    return false;
  }
}
