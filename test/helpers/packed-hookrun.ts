import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { packCheckout } from './pack-once.js';
import { pollUntil } from './poll.js';

export { npm, NPM_FLAGS } from './npm.js';

/**
 * What a user installs: the tarball packed once for the run into the folder
 * pack-once.ts made. The first caller of the run packs it (a `packing`
 * folder made there says who); the others wait for its `packed.json`
 * (bounded). A file an older build left in dist/ was planted first: the
 * tarball must not carry it.
 */
export async function packHookrun(): Promise<{ tarball: string; files: string[] }> {
  const dir = inject('packDir');
  const done = join(dir, 'packed.json');
  if (claimPacking(dir)) {
    try {
      writeFileSync(done, JSON.stringify(await packCheckout(dir)));
    } catch (error) {
      const { message, stdout, stderr } = error as { message: string; stdout?: string; stderr?: string };
      writeFileSync(done, JSON.stringify({ error: `${message}\n${stdout ?? ''}\n${stderr ?? ''}` }));
    }
  }
  await pollUntil('the packed tarball', 420_000, async () => (existsSync(done) ? true : undefined), 250);
  const packed = JSON.parse(readFileSync(done, 'utf8')) as { tarball: string; files: string[] } | { error: string };
  if ('error' in packed) throw new Error(`npm pack failed: ${packed.error}`);
  return packed;
}

/** Whether this caller is the run's first: mkdir is atomic, so exactly one caller makes the folder. */
function claimPacking(dir: string): boolean {
  try {
    mkdirSync(join(dir, 'packing'));
    return true;
  } catch {
    return false;
  }
}
