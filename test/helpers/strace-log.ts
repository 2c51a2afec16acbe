import { readFileSync } from 'node:fs';

/** One system call from an `strace -f -y -o` log: its name, the file its first descriptor names, and where it began and ended. */
export interface Syscall {
  name: string;
  /** What `-y` printed for the first argument (a path, or `socket:[…]`), '' when none. */
  file: string;
  /** The arguments as printed (strings cut at `-s`). */
  args: string;
  /** Line numbers of its entry and of its return (equal when strace printed it whole). */
  entry: number;
  exit: number;
}

/**
 * Read an strace log written with `-f -y -o FILE`: calls split by another
 * thread (`<unfinished ...>` … `<... fsync resumed>`) are joined, so `entry`
 * and `exit` order every call against the others.
 */
export function readStraceLog(path: string): Syscall[] {
  const calls: Syscall[] = [];
  const open = new Map<string, Syscall>();
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((line, index) => {
      const resumed = /^(\d+)\s+<\.\.\. (\w+) resumed>/.exec(line);
      if (resumed) {
        const call = open.get(resumed[1]!);
        if (call) {
          call.exit = index;
          calls.push(call);
          open.delete(resumed[1]!);
        }
        return;
      }
      const started = /^(\d+)\s+(\w+)\((.*)$/.exec(line);
      if (!started) return;
      const args = started[3]!;
      const call: Syscall = { name: started[2]!, file: /^\d+<([^>]*)>/.exec(args)?.[1] ?? '', args, entry: index, exit: index };
      if (args.endsWith('<unfinished ...>')) open.set(started[1]!, call);
      else calls.push(call);
    });
  return calls.sort((a, b) => a.entry - b.entry);
}

const WAL_SEGMENT = /\/pg_wal\/([0-9A-F]{24})$/;
const WRITES = new Set(['write', 'pwrite64', 'writev', 'pwritev', 'pwritev2']);
const SYNCS = new Set(['fsync', 'fdatasync']);

/** The WAL segment a call's file is (its 24-hex-digit name), or undefined. */
export function walSegment(call: Syscall): string | undefined {
  return WAL_SEGMENT.exec(call.file)?.[1];
}

/** True for a write of an HTTP response with this status class to a TCP socket (`2` for any 2xx). */
export function isHttpResponse(call: Syscall, status: string): boolean {
  return WRITES.has(call.name) && /^(socket|TCP|TCPv6):/.test(call.file) && call.args.includes(`"HTTP/1.1 ${status}`);
}

/**
 * Whether the WAL was on disk when the response `answer` began. A commit
 * writes its WAL and fsyncs it before it returns, so the last WAL fsync that
 * began after `since` (the previous response) and ended before `answer` is
 * where the answered commit became durable at the latest. Every segment
 * written before that fsync must have been fsynced after its last such write
 * and by then. WAL written after it belongs to a transaction that had not
 * committed when the response went out (on the embedded database's one
 * session, the worker's batch), so it is not judged. `lastSync` is undefined
 * when no WAL fsync happened in the window at all.
 */
export function walSyncedBefore(calls: Syscall[], since: Syscall, answer: Syscall): { lastSync?: Syscall; segments: { segment: string; synced: boolean }[] } {
  const lastSync = calls.filter((c) => isWalSync(c) && c.entry > since.entry && c.exit < answer.entry).at(-1);
  if (!lastSync) return { segments: [] };
  const lastWrite = new Map<string, Syscall>();
  for (const call of calls) {
    const segment = walSegment(call);
    if (segment && WRITES.has(call.name) && call.exit < lastSync.entry) lastWrite.set(segment, call);
  }
  const segments = [...lastWrite].map(([segment, write]) => ({
    segment,
    synced: calls.some((c) => SYNCS.has(c.name) && walSegment(c) === segment && c.entry > write.exit && c.exit <= lastSync.exit),
  }));
  return { lastSync, segments };
}

/** True for a write to a WAL segment. */
export function isWalWrite(call: Syscall): boolean {
  return WRITES.has(call.name) && walSegment(call) !== undefined;
}

/** True for an fsync or fdatasync of a WAL segment. */
export function isWalSync(call: Syscall): boolean {
  return SYNCS.has(call.name) && walSegment(call) !== undefined;
}
