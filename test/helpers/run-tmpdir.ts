import { accessSync, chmodSync, constants, mkdirSync, mkdtempSync, rmSync, statfsSync, symlinkSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

const RUN_TMPDIR = Symbol.for('hookrun.test.runTmpdir');

/** Linux's memory file system, as statfs(2) names it. */
const TMPFS_MAGIC = 0x01021994;
/** What the run may put there at its peak (installs of the tarball and of Next.js, data dirs), with room to spare. */
const MEMORY_FOLDER_MIN_FREE = 4 * 1024 ** 3;

/**
 * Where the run's folder goes: `/dev/shm` when it is a writable tmpfs with
 * room, else the system's temp dir. In memory, what the tests write (npm
 * installs, data dirs PGlite fsyncs, the trees they remove) costs no
 * journal, discard or block-device work: whole runs here, against ext4's
 * /tmp, took 863 CPU-s of the machine against 953 (kernel threads 67 against
 * 108, the run's own system time 99 against 131). Nothing a test checks
 * needs the disk: a killed process loses nothing the page cache holds.
 */
function runFolderParent(): string {
  try {
    const fs = statfsSync('/dev/shm');
    accessSync('/dev/shm', constants.W_OK);
    if (fs.type === TMPFS_MAGIC && fs.bavail * fs.bsize >= MEMORY_FOLDER_MIN_FREE) return '/dev/shm';
  } catch {
    // no /dev/shm (macOS), or not ours to write
  }
  return tmpdir();
}

/**
 * The run's own temporary folder: `TMPDIR` points into it for the rest of the
 * run, so every folder a test makes with `mkdtemp(tmpdir())` (data dirs,
 * projects, installs), in its fork or in a process it spawns, lands there,
 * and the run removes it at its end. A test that forgets to remove what it
 * made, or a process killed before it could, leaves nothing behind (runs
 * used to leave about 200 MB each in /tmp). The folder is in memory where
 * the machine has room (runFolderParent). The reliability figures and
 * tsx's cache stay in the system's temp dir.
 */
export default function setup(): () => void {
  const registry = globalThis as unknown as Record<symbol, { dir: string; users: number } | undefined>;
  const run = (registry[RUN_TMPDIR] ??= (() => {
    const outer = tmpdir();
    process.env.RELIABILITY_FIGURES_FILE ??= join(outer, 'hookrun-reliability-figures.jsonl');
    const dir = mkdtempSync(join(runFolderParent(), 'hookrun-run-'));
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
