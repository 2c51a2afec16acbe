import type { Clock } from '../clock.js';
import type { Database } from '../db/database.js';
import { messageOf } from '../errors.js';
import type { Logger } from '../log.js';
import { WakeableSleep } from '../wakeable-sleep.js';
import { advanceReplays, nextReplayDue } from './advance.js';

/** How often an instance looks for a bulk replay when none runs (a started one waits at most this long). */
const IDLE_MS = 2000;
/** The shortest sleep between looks while one runs. */
const MIN_WAIT_MS = 50;

/** The loop that advances bulk replays on this instance; every instance may run one. */
export interface ReplayRunner {
  start(): void;
  /** Look now (a replay was just started here). */
  wake(): void;
  /** Stop looking; resolves after a slice in progress commits. */
  stop(): Promise<void>;
}

/**
 * Advance every due bulk replay by a slice, then sleep until the next is due
 * (each is held a second after its slice: its rate per second). Several
 * instances share the work through the batch row's lock; a failed step is
 * logged and tried again, never stopping the service.
 */
export function createReplayRunner(deps: { db: Database; clock: Clock; log: Logger }): ReplayRunner {
  const { db, clock, log } = deps;
  const sleep = new WakeableSleep();
  let stopped = false;
  let loop: Promise<void> | undefined;

  const pass = async (): Promise<number> => {
    for (;;) {
      if (stopped) return IDLE_MS;
      const step = await advanceReplays(db, clock);
      if (step.batchId === undefined) break;
      if (step.done) log.info({ replay: step.batchId }, 'bulk replay done');
    }
    const due = await nextReplayDue(db);
    return due === undefined ? IDLE_MS : Math.min(Math.max(due - clock.now(), MIN_WAIT_MS), IDLE_MS);
  };

  const run = async () => {
    while (!stopped) {
      sleep.clear();
      let waitMs = IDLE_MS;
      try {
        waitMs = await pass();
      } catch (error) {
        log.warn({ err: { message: messageOf(error) } }, 'bulk replay step failed; trying again shortly');
      }
      if (!stopped) await sleep.sleep(waitMs);
    }
  };

  return {
    start() {
      loop ??= run();
    },
    wake: () => sleep.wake(),
    async stop() {
      stopped = true;
      sleep.wake();
      await loop;
    },
  };
}

/**
 * On-demand processing (a serverless function's drain): advance the running
 * bulk replays at their rates until none is left, one yields to the inbox's
 * waiting work (processing it is the next drain's) or `deadline`
 * (performance.now()) is near, waiting between slices as the loop would.
 * Returns the events put back.
 */
export async function advanceReplaysUntil(deps: { db: Database; clock: Clock }, deadline: number): Promise<number> {
  let replayed = 0;
  while (performance.now() < deadline) {
    const step = await advanceReplays(deps.db, deps.clock);
    replayed += step.replayed;
    if (step.yielded) return replayed; // the inbox has work waiting: the next drain processes it first, then goes on
    if (step.batchId !== undefined) continue;
    const due = await nextReplayDue(deps.db);
    if (due === undefined) return replayed;
    const waitMs = Math.max(due - deps.clock.now(), MIN_WAIT_MS);
    if (performance.now() + waitMs >= deadline) return replayed;
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
  return replayed;
}
