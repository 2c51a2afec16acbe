import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

const RUN_TMPDIR = Symbol.for('hookrun.test.runTmpdir');

/**
 * The run's own temporary folder: `TMPDIR` points into it for the rest of the
 * run, so every folder a test makes with `mkdtemp(tmpdir())` (data dirs,
 * projects, installs), in its fork or in a process it spawns, lands there,
 * and the run removes it at its end. A test that forgets to remove what it
 * made, or a process killed before it could, leaves nothing behind (runs
 * used to leave about 200 MB each in /tmp). The reliability figures and
 * tsx's cache stay in the outer folder.
 */
export default function setup(): () => void {
  const registry = globalThis as unknown as Record<symbol, { dir: string; users: number } | undefined>;
  const run = (registry[RUN_TMPDIR] ??= (() => {
    const outer = tmpdir();
    process.env.RELIABILITY_FIGURES_FILE ??= join(outer, 'hookrun-reliability-figures.jsonl');
    const dir = mkdtempSync(join(outer, 'hookrun-run-'));
    chmodSync(dir, 0o1777); // as /tmp is: a process a test runs as another user (PgBouncer as postgres) reaches its folder
    // tsx keeps its transforms (keyed by content) in <tmpdir>/tsx-<uid>: the run's spawned tsx processes keep using the outer one.
    const tsxCache = `tsx-${userInfo().uid}`;
    mkdirSync(join(outer, tsxCache), { recursive: true });
    symlinkSync(join(outer, tsxCache), join(dir, tsxCache), 'dir');
    process.env.TMPDIR = dir;
    return { dir, users: 0 };
  })());
  run.users += 1;
  return () => {
    run.users -= 1;
    if (run.users === 0) rmSync(run.dir, { recursive: true, force: true });
  };
}
