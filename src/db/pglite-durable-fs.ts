import { fsyncSync } from 'node:fs';
import { NodeFS } from '@electric-sql/pglite/nodefs';

type InitOptions = Parameters<NodeFS['init']>[1];

/** The part of PGlite's Emscripten module this file touches: the Node file system's stream operations. */
interface EmscriptenNodeFs {
  NODEFS: {
    stream_ops: { fsync?: (stream: { nfd?: number }) => number };
    /** Runs a Node fs call, turning its error into the errno PostgreSQL sees. */
    tryFSOperation<T>(operation: () => T): T;
  };
}

/**
 * PGlite's data dir on Node's file system, with fsync reaching the disk.
 * PGlite's runtime (Emscripten) sends PostgreSQL's fsync() to the file's
 * `stream_ops.fsync` and its Node file system has none, so every fsync was a
 * no-op; fdatasync() is a no-op in the runtime itself (hence
 * `wal_sync_method=fsync` in `durableStartParams`). With this, PostgreSQL's
 * own discipline holds: the WAL up to a commit is fsynced before the commit
 * returns (whatever segment it is in), and a checkpoint fsyncs the data files
 * and pg_control before old WAL is recycled. A failed fsync is returned as its
 * errno, on which PostgreSQL stops (PANIC) rather than acknowledge.
 */
export class DurableNodeFS extends NodeFS {
  override async init(pg: Parameters<NodeFS['init']>[0], opts: InitOptions): ReturnType<NodeFS['init']> {
    const giveFsync = (mod: EmscriptenNodeFs) => {
      const nodefs = mod.NODEFS;
      nodefs.stream_ops.fsync = (stream) => {
        if (stream.nfd !== undefined) nodefs.tryFSOperation(() => fsyncSync(stream.nfd!));
        return 0;
      };
    };
    return super.init(pg, { ...opts, preRun: [...(opts.preRun ?? []), giveFsync as NonNullable<InitOptions['preRun']>[number]] });
  }
}

/**
 * PGlite's start parameters made durable: its defaults pass `-F` (fsync=off),
 * and the WAL must be synced with fsync(), the one call that reaches the disk.
 */
export function durableStartParams(params: readonly string[]): string[] {
  return [...params.filter((p) => p !== '-F'), '-c', 'fsync=on', '-c', 'wal_sync_method=fsync', '-c', 'synchronous_commit=on', '-c', 'full_page_writes=on'];
}
