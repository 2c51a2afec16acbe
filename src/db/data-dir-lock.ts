import { mkdirSync, openSync, readFileSync, unlinkSync, writeSync, closeSync } from 'node:fs';
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

function tryCreate(lockPath: string): boolean {
  try {
    const fd = openSync(lockPath, 'wx');
    writeSync(fd, String(process.pid));
    closeSync(fd);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/**
 * Take the exclusive lock on an embedded data dir. Two processes on one PGlite
 * dir silently lose writes, so a live holder makes this throw a `ConfigError`
 * that says what to do; a lock left by a killed process (its pid is gone) is
 * taken over. Returns the function that releases the lock.
 */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const lockPath = join(dataDir, LOCK_FILE_NAME);
  for (let attempt = 0; attempt < 3; attempt++) {
    if (tryCreate(lockPath)) {
      return () => {
        try {
          if (readFileSync(lockPath, 'utf8').trim() === String(process.pid)) unlinkSync(lockPath);
        } catch {
          // already gone: nothing to release
        }
      };
    }
    let holder = NaN;
    try {
      holder = Number(readFileSync(lockPath, 'utf8').trim());
    } catch {
      continue; // removed between our open and read: try again
    }
    if (isProcessAlive(holder)) {
      throw new ConfigError(
        `DATA_DIR ${dataDir} is in use by another hookrun process (pid ${holder}). ` +
          'Stop that process, or give this one its own DATA_DIR; to run several instances, share a PostgreSQL database with DATABASE_URL.',
      );
    }
    try {
      unlinkSync(lockPath); // stale: its process is gone
    } catch {
      // someone else removed it first
    }
  }
  throw new ConfigError(`DATA_DIR ${dataDir}: could not take the lock file ${lockPath}; check the folder's permissions.`);
}
