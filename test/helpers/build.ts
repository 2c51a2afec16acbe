import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Rebuild dist/ when any file under src/ is newer, so tests that spawn `npm start` run the code under test. */
export function ensureBuilt(root: string = process.cwd()): void {
  let built = 0;
  try {
    built = statSync(join(root, 'dist', 'main.js')).mtimeMs;
  } catch {
    built = 0;
  }
  if (built >= newestMtime(join(root, 'src'))) return;
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
}
