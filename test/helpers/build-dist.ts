import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const ROOT = resolve(import.meta.dirname, '..', '..');
const LOCK_DIR = join(tmpdir(), 'hookrun-build-dist.lock');
const BUILD_TIMEOUT_MS = 120_000;

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** True when dist/main.js is missing or older than some file under src/ or drizzle/. */
export function isDistStale(): boolean {
  let built: number;
  try {
    built = statSync(join(ROOT, 'dist', 'main.js')).mtimeMs;
  } catch {
    return true;
  }
  return newestMtime(join(ROOT, 'src')) > built;
}

let building: Promise<void> | undefined;

/**
 * Spawned-process tests run `dist/main.js`. CI builds it (`npm ci` → `prepare`);
 * locally it is rebuilt here when missing or stale, once, under a lock shared
 * by the test workers. A type error elsewhere still emits JS, so only a
 * missing dist/main.js fails.
 */
export function ensureDistBuilt(): Promise<void> {
  return (building ??= (async () => {
    if (!isDistStale()) return;
    const deadline = Date.now() + BUILD_TIMEOUT_MS;
    for (;;) {
      try {
        mkdirSync(LOCK_DIR);
        break;
      } catch {
        if (Date.now() > deadline) throw new Error(`another test worker holds ${LOCK_DIR}; remove it if no build runs`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    try {
      if (!isDistStale()) return;
      await promisify(execFile)('npm', ['run', 'build'], { cwd: ROOT, timeout: BUILD_TIMEOUT_MS }).catch(() => undefined);
      statSync(join(ROOT, 'dist', 'main.js'));
    } finally {
      rmdirSync(LOCK_DIR);
    }
  })());
}
