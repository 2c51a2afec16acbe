import { linkSync, mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';

/** The lock file that guards an embedded data dir; PGlite takes none of its own. */
export const LOCK_FILE_NAME = 'hookrun.lock';

/** True when `pid` is a live process other than this one (EPERM: alive, owned by someone else). */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Create `path` holding our pid, atomically: the pid is written to a private
 * file first and hard-linked into place, so no reader ever sees the file
 * empty (an empty lock read as "no live holder" let two processes in).
 */
function createWithPid(path: string): boolean {
  const temp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  writeFileSync(temp, String(process.pid), { flag: 'wx' });
  try {
    linkSync(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    unlinkSync(temp);
  }
}

/** The pid in a lock file; undefined when the file is gone. */
function readPid(path: string): number | undefined {
  try {
    return Number(readFileSync(path, 'utf8').trim());
  } catch {
    return undefined;
  }
}

const ATTEMPTS = 200;
const RETRY_MS = 5;

/**
 * Take the exclusive lock on an embedded data dir. Two processes on one PGlite
 * dir silently lose writes, so a live holder makes this throw a `ConfigError`
 * that says what to do. A lock left by a killed process (its pid is gone) is
 * taken over under a second, short-lived lock (`hookrun.lock.takeover`), so
 * of many processes starting at once exactly one takes it: the one holding the
 * takeover lock re-reads the stale pid before removing it. Returns the release.
 */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const lockPath = join(dataDir, LOCK_FILE_NAME);
  const takeoverPath = `${lockPath}.takeover`;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (createWithPid(lockPath)) {
      return () => {
        if (readPid(lockPath) === process.pid) rmSync(lockPath, { force: true });
      };
    }
    const holder = readPid(lockPath);
    if (holder === undefined) continue; // released between our link and read: try again
    if (isProcessAlive(holder)) {
      throw new ConfigError(
        `DATA_DIR ${dataDir} is in use by another hookrun process (pid ${holder}). ` +
          'Stop that process, or give this one its own DATA_DIR; to run several instances, share a PostgreSQL database with DATABASE_URL.',
      );
    }
    if (createWithPid(takeoverPath)) {
      try {
        if (readPid(lockPath) === holder) unlinkSync(lockPath); // still the same stale lock: remove it (nobody else may now)
      } finally {
        unlinkSync(takeoverPath);
      }
      continue;
    }
    const taker = readPid(takeoverPath);
    if (taker !== undefined && !isProcessAlive(taker) && taker !== process.pid) {
      try {
        unlinkSync(takeoverPath); // a taker that died inside its few microseconds
      } catch {
        // another process removed it first
      }
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, RETRY_MS); // another process is taking over: let it finish
  }
  throw new ConfigError(`DATA_DIR ${dataDir}: could not take the lock file ${lockPath}; check the folder's permissions.`);
}
