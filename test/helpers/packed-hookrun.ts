import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { pollUntil } from './poll.js';

const run = promisify(execFile);

/** npm's flags for installs in tests: quiet, and from the local cache when it has the package. */
export const NPM_FLAGS = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];

/** Run npm in a folder (bounded: an install that hangs fails the test instead of the whole run). */
export async function npm(args: string[], cwd: string): Promise<void> {
  await run('npm', [...args, ...NPM_FLAGS], { cwd, timeout: 240_000, env: { ...process.env, npm_config_update_notifier: 'false' } });
}

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
