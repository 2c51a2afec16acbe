import { AsyncLocalStorage } from 'node:async_hooks';
import { loadConfig, type Config } from '../config/config.js';

/**
 * What one CLI run writes to and reads from. The bin hands the process's own
 * (process.stdout, process.env, the working directory); an in-process caller
 * (the test suite) hands its own, so a command needs no process of its own.
 */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** The environment the command reads (and `.env` files add to). */
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Whether stderr is a terminal: progress is drawn in place there. */
  stderrIsTTY: boolean;
}

/** One run in progress: its io and the exit code a command set for a soft failure. */
interface CliRun {
  io: CliIo;
  exitCode: number | undefined;
}

const current = new AsyncLocalStorage<CliRun>();

/** The io objects `processIo` made: a run on one needs no AsyncLocalStorage (see withCliIo). */
const ownProcess = new WeakSet<CliIo>();

/** The process's own stdout, stderr, environment and directory: what the bin runs with. */
export function processIo(): CliIo {
  const io: CliIo = {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
    stderrIsTTY: process.stderr.isTTY === true,
  };
  ownProcess.add(io);
  return io;
}

/** The io of the CLI run this code is part of (the process's own outside any run), so commands never name `process` directly. */
export function cliIo(): CliIo {
  return current.getStore()?.io ?? processIo();
}

/** Write to the current run's stdout. */
export function writeOut(text: string): void {
  cliIo().stdout(text);
}

/** Write to the current run's stderr. */
export function writeErr(text: string): void {
  cliIo().stderr(text);
}

/** A soft failure: the run ends normally but with this exit code (what `process.exitCode = n` did when each run was a process). */
export function setExitCode(code: number): void {
  const run = current.getStore();
  if (run) run.exitCode = code;
  else process.exitCode = code;
}

/** The configuration from the current run's environment and directory. */
export function loadCliConfig(): Config {
  const io = cliIo();
  return loadConfig(io.env, io.cwd);
}

/**
 * Run `body` as a CLI run with `io`; resolves with the exit code a command set
 * (undefined when none did). The process's own io is what code outside any
 * run gets already, so the bin's run takes no AsyncLocalStorage: once one
 * runs, every promise the process makes pays for async hooks, and `start`
 * serves on that promise chain (2 % of a receiver's CPU in a profile).
 */
export async function withCliIo(io: CliIo, body: () => Promise<void>): Promise<number | undefined> {
  if (ownProcess.has(io)) {
    await body();
    return typeof process.exitCode === 'number' ? process.exitCode : undefined;
  }
  const run: CliRun = { io, exitCode: undefined };
  await current.run(run, body);
  return run.exitCode;
}
