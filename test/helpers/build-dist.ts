import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const ROOT = resolve(import.meta.dirname, '..', '..');
const LOCK_DIR = join(tmpdir(), 'hookrun-build-dist.lock');
const BUILD_TIMEOUT_MS = 120_000;

function newestFile(dir: string): { path: string; mtimeMs: number } {
  let newest = { path: dir, mtimeMs: 0 };
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const candidate = entry.isDirectory() ? newestFile(path) : { path, mtimeMs: statSync(path).mtimeMs };
    if (candidate.mtimeMs > newest.mtimeMs) newest = candidate;
  }
  return newest;
}

/** Why dist/ must be rebuilt (missing, or older than a file under src/), or undefined when it is fresh. */
function distStaleness(): string | undefined {
  let built: number;
  try {
    built = statSync(join(ROOT, 'dist', 'main.js')).mtimeMs;
  } catch {
    return 'dist/main.js is missing';
  }
  const newest = newestFile(join(ROOT, 'src'));
  return newest.mtimeMs > built ? `${newest.path} is newer than dist/main.js` : undefined;
}

/**
 * Build into a fresh folder, then swap it in: a process that other test
 * files spawned from dist/ (and that imports its modules lazily) never sees
 * dist/ half-emptied by a rebuild.
 */
async function buildAndSwap(): Promise<void> {
  const next = join(ROOT, `dist.next-${process.pid}`);
  const old = join(ROOT, `dist.old-${process.pid}`);
  rmSync(next, { recursive: true, force: true });
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', next], { cwd: ROOT, timeout: BUILD_TIMEOUT_MS }).catch(
    () => undefined,
  );
  if (!existsSync(join(next, 'main.js'))) throw new Error('the build of dist/ emitted no main.js: run `npm run build` to see why');
  chmodSync(join(next, 'main.js'), 0o755);
  if (existsSync(join(ROOT, 'dist'))) renameSync(join(ROOT, 'dist'), old);
  renameSync(next, join(ROOT, 'dist'));
  rmSync(old, { recursive: true, force: true });
}

let building: Promise<void> | undefined;

/**
 * Spawned-process tests run `dist/main.js`. CI builds it (`npm ci` → `prepare`);
 * locally it is rebuilt here when missing or stale, once, under a lock shared
 * by the test workers, and swapped in whole (see buildAndSwap). A type error
 * elsewhere still emits JS, so only a missing dist/main.js fails.
 */
export function ensureDistBuilt(): Promise<void> {
  return (building ??= (async () => {
    if (distStaleness() === undefined) return;
    const deadline = Date.now() + BUILD_TIMEOUT_MS;
    for (;;) {
      try {
        mkdirSync(LOCK_DIR);
        break;
      } catch {
        // A lock older than a build can take was left by a killed run: take it over.
        const lockedAt = statSync(LOCK_DIR, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
        if (Date.now() - lockedAt > 2 * BUILD_TIMEOUT_MS) rmSync(LOCK_DIR, { recursive: true, force: true });
        if (Date.now() > deadline) throw new Error(`another test worker holds ${LOCK_DIR}; remove it if no build runs`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    try {
      const why = distStaleness();
      if (why === undefined) return;
      console.warn(`\n  rebuilding dist/ for the spawned-process tests: ${why}\n`);
      await buildAndSwap();
    } finally {
      rmdirSync(LOCK_DIR);
    }
  })());
}
