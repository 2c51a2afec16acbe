import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { NEXT_PROJECT, buildNextApp, deployDocsNextConfig, installNextPackages, nextAppManifest } from './next-app.js';
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
    await installNextPackages(installedIn, tarball);
    return { installedIn };
  });
  return { tarball, installedIn };
}

/**
 * The Next.js app built once for the run from the tarball: NEXT_PROJECT under
 * `hookrun/`, docs/deploy.md's next.config.mjs, a package.json without
 * "type" (as create-next-app writes it). Served two ways, by two files:
 * `next start` from its folder (next-app.test.ts) and its standalone output
 * copied out (next-standalone.test.ts); each with its own database and notes.
 */
export function nextAppBuilt(): Promise<{ app: string }> {
  return madeOncePerRun('next-app', async (dir) => {
    const { tarball, installedIn } = await nextPackagesInstalled();
    const app = join(dir, 'next-app');
    await buildNextApp(app, tarball, NEXT_PROJECT, { 'next.config.mjs': deployDocsNextConfig() }, undefined, installedIn);
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
