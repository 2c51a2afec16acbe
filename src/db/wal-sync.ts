import { closeSync, fsyncSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const SEGMENT = /^[0-9A-F]{24}$/;

/**
 * fsync for the embedded database. PGlite writes its WAL through Node's file
 * system but never calls fsync (strace of a start and 3 commits: 0 calls,
 * whatever `fsync=on` says), so an acknowledged event survived `kill -9` but
 * not an OS crash or a power loss. This flushes the WAL segment being written
 * to disk; crash recovery replays the WAL, so a commit whose WAL is on disk
 * survives. Called after each group commit, before any caller is answered.
 */
export function createWalSync(pgdata: string): () => void {
  const walDir = join(pgdata, 'pg_wal');
  let current: { name: string; fd: number } | undefined;
  return () => {
    const newest = readdirSync(walDir).filter((name) => SEGMENT.test(name)).sort().at(-1);
    if (!newest) return;
    if (current?.name !== newest) {
      // A commit may span the switch: flush the end of the old segment too, then keep one descriptor open.
      if (current) {
        fsyncSync(current.fd);
        closeSync(current.fd);
      }
      current = { name: newest, fd: openSync(join(walDir, newest), 'r+') };
    }
    fsyncSync(current.fd);
  };
}
