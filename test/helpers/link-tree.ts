import { execFile } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A copy of the folder `from` at `to` (which must not exist) whose files are
 * hard links where both sit on one file system, symlinks kept as they are;
 * else a real copy. For trees that are only read once copied (an install's
 * node_modules, a build's output): linking 11,000 files takes a tenth of a
 * second, copying them seconds of CPU and their size in page cache.
 */
export async function linkTree(from: string, to: string): Promise<void> {
  try {
    await run('cp', ['-al', from, to]);
  } catch {
    rmSync(to, { recursive: true, force: true });
    cpSync(from, to, { recursive: true, verbatimSymlinks: true });
  }
}
