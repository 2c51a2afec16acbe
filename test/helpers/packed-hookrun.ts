import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { pollUntil } from './poll.js';

export { npm, NPM_FLAGS } from './npm.js';

/**
 * What a user installs: the tarball the package project's setup packed once
 * for the run (pack-once.ts), waited for here (bounded). A file an older
 * build left in dist/ was planted first: the tarball must not carry it.
 */
export async function packHookrun(): Promise<{ tarball: string; files: string[] }> {
  const done = join(inject('packDir'), 'packed.json');
  await pollUntil('the packed tarball', 300_000, async () => (existsSync(done) ? true : undefined), 250);
  const packed = JSON.parse(readFileSync(done, 'utf8')) as { tarball: string; files: string[] } | { error: string };
  if ('error' in packed) throw new Error(`npm pack failed: ${packed.error}`);
  return packed;
}
