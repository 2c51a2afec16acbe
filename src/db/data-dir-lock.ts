import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';

/** The lock file that guards an embedded data dir; PGlite takes none of its own. While held it names the holder's pid. */
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

/** The lock, held: `release` frees it (and resolves once it is free); `lost` resolves if it is ever freed without `release`. */
export interface DataDirLock {
  release(): Promise<void>;
  lost: Promise<Error>;
}

/** util-linux (and busybox) `flock -n`, and the perl locker, exit 1 when another process holds the lock. */
const HELD_ELSEWHERE = 1;
const RELEASE_WAIT_MS = 2_000;
/** A holder killed a moment ago frees the lock once its locker child has read the end of its pipe: retry for about a second. */
const ATTEMPTS = 10;
const RETRY_MS = 100;

/** Take the lock, retrying for about a second while another process holds it; see `lockDataDir`. */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await tryLockDataDir(dataDir);
    } catch (error) {
      if (!(error instanceof HeldElsewhere) || attempt >= ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}

/** The refusal while another process holds the lock (retried before it reaches the caller). */
class HeldElsewhere extends ConfigError {}

/** A program that holds flock(2) on a file while its stdin stays open: it prints `locked` once held, and exits 1 when another process holds it. */
interface Locker {
  command: string;
  args(lockPath: string): string[];
}

/** perl's flock() is flock(2), so it and `flock` exclude each other; `1 while <STDIN>` waits for the end of our pipe. */
const PERL_LOCKER =
  'open(my $f, ">>", $ARGV[0]) or die "cannot open $ARGV[0]: $!\\n"; flock($f, LOCK_EX | LOCK_NB) or ($!{EWOULDBLOCK} ? exit 1 : die "flock: $!\\n"); $| = 1; print "locked\\n"; 1 while <STDIN>;';

/**
 * The lockers, first found on PATH wins: util-linux's (or busybox's) `flock`,
 * then perl where `flock` is missing (macOS ships perl, not `flock`).
 */
const LOCKERS: readonly Locker[] = [
  // Short options: util-linux and busybox alike. `exec cat` waits for the end of our pipe; the held descriptor is inherited.
  { command: 'flock', args: (lockPath) => ['-x', '-n', lockPath, 'sh', '-c', 'echo locked; exec cat >/dev/null'] },
  { command: 'perl', args: (lockPath) => ['-MFcntl=:flock', '-e', PERL_LOCKER, lockPath] },
];

/** A locker started: the child, how it exited, its stderr so far, and whether it holds the lock, exited, or could not start. */
async function startLocker(locker: Locker, lockPath: string) {
  const child = spawn(locker.command, locker.args(lockPath), { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stderr = { text: '' };
  child.stderr.on('data', (chunk) => (stderr.text += chunk));
  const outcome = await new Promise<'locked' | 'exited' | NodeJS.ErrnoException>((resolve) => {
    child.stdout.on('data', (chunk) => String(chunk).includes('locked') && resolve('locked'));
    child.once('error', (error) => resolve(error as NodeJS.ErrnoException));
    void exited.then(() => resolve('exited'));
  });
  return { child, exited, stderr, outcome };
}

/**
 * Take the exclusive lock on an embedded data dir. Two processes on one PGlite
 * dir silently lose writes, so a holder makes this throw a `ConfigError` that
 * says what to do. The lock is the kernel's flock(2) on `hookrun.lock`, held by
 * a child process (`flock`, or perl where it is missing) whose stdin is a pipe
 * from us: when we exit, however (kill -9 included), the pipe closes, the child
 * ends and the kernel frees the lock. A pid check could not tell, across PID
 * namespaces (two containers on one volume), a live holder from a stale lock;
 * the kernel's lock can.
 */
async function tryLockDataDir(dataDir: string): Promise<DataDirLock> {
  mkdirSync(dataDir, { recursive: true });
  const lockPath = join(dataDir, LOCK_FILE_NAME);
  let started: Awaited<ReturnType<typeof startLocker>> | undefined;
  let locker: Locker | undefined;
  for (locker of LOCKERS) {
    started = await startLocker(locker, lockPath);
    if (!(started.outcome instanceof Error && started.outcome.code === 'ENOENT')) break;
  }
  const { child, exited, stderr, outcome } = started!;
  if (outcome instanceof Error) {
    throw new ConfigError(
      outcome.code === 'ENOENT'
        ? `DATA_DIR ${dataDir}: the embedded database locks its data dir with \`flock\` (util-linux), or with perl where that is missing, and neither is on PATH. ` +
            'Install one (macOS: brew install flock; Alpine: apk add util-linux), or use PostgreSQL with DATABASE_URL.'
        : `DATA_DIR ${dataDir}: could not start \`${locker!.command}\` to lock the data dir (${outcome.message}).`,
    );
  }
  if (outcome === 'exited') {
    const code = await exited;
    if (code === HELD_ELSEWHERE && !stderr.text.trim()) {
      const holder = readHolder(lockPath);
      throw new HeldElsewhere(
        `DATA_DIR ${dataDir} is in use by another hookrun process${holder ? ` (pid ${holder}, as that process sees it)` : ''}. ` +
          'Stop that process, or give this one its own DATA_DIR; to run several instances, share a PostgreSQL database with DATABASE_URL.',
      );
    }
    throw new ConfigError(
      `DATA_DIR ${dataDir}: could not lock ${lockPath} (${locker!.command} exited ${code}: ${stderr.text.trim() || 'no message'}); check the folder's permissions.`,
    );
  }
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as unknown as { unref?: () => void }).unref?.();
  writeFileSync(lockPath, String(process.pid)); // for `hookrun` commands and the refusal message; the kernel lock is what counts
  let releasing = false;
  const lost = exited.then(() => new Error(`The DATA_DIR ${dataDir} lock was lost (its lock process ended): stop this hookrun and start it again.`));
  return {
    lost: new Promise((resolve) => void lost.then((error) => !releasing && resolve(error))),
    async release() {
      if (releasing) return;
      releasing = true;
      writeFileSync(lockPath, ''); // no holder named once it is free (the file stays: removing it would let two lock two files)
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), RELEASE_WAIT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The pid a lock file names, or '' when it names none. */
function readHolder(lockPath: string): string {
  try {
    return /^\d+$/.test(readFileSync(lockPath, 'utf8').trim()) ? readFileSync(lockPath, 'utf8').trim() : '';
  } catch {
    return '';
  }
}
