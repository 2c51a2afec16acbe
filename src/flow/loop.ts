import { backoffMs } from '../backoff.js';
import type { Clock } from '../clock.js';
import { messageOf } from '../errors.js';
import type { Logger } from '../log.js';
import type { FlowRunner } from './runner.js';
import { WakeableSleep } from '../wakeable-sleep.js';

/** The flow claimer's loop: started and stopped with the worker, woken by new flow-controlled deliveries and finished ones. */
export interface FlowLoop {
  start(): void;
  wake(): void;
  /** Stop claiming and wait for the deliveries running (the caller bounds the wait). */
  stop(): Promise<void>;
}

const DB_BACKOFF = { baseMs: 500, maxMs: 30_000 };

/**
 * Claim flow-controlled deliveries in a loop of its own, beside the inbox's:
 * a busy inbox never delays a rate limit's slots. Sleeps until the next key
 * is ready, at most `pollIntervalMs` (other instances' new deliveries), or until
 * woken; backs off while the database is down.
 */
export function createFlowLoop(flow: FlowRunner, deps: { clock: Clock; log: Logger; pollIntervalMs: number; random: () => number }): FlowLoop {
  let stopping = false;
  const sleeper = new WakeableSleep();
  let done: Promise<void> | undefined;

  async function loop(): Promise<void> {
    let failures = 0;
    while (!stopping) {
      let delayMs: number;
      try {
        sleeper.clear();
        const { started, nextAt } = await flow.run();
        if (failures > 0) deps.log.info({ failures }, 'database reachable again; flow-controlled deliveries resumed');
        failures = 0;
        delayMs = started > 0 ? 0 : nextAt === undefined ? deps.pollIntervalMs : Math.min(deps.pollIntervalMs, Math.max(1, nextAt - deps.clock.now()));
      } catch (error) {
        failures += 1;
        delayMs = backoffMs(failures, DB_BACKOFF, deps.random);
        deps.log[failures === 1 ? 'error' : 'warn'](
          { failures, retryInMs: delayMs, err: { message: messageOf(error) } },
          'flow claimer cannot reach the database; backing off',
        );
      }
      if (delayMs > 0 && !stopping) await sleeper.sleep(delayMs);
    }
  }

  const self: FlowLoop = {
    start() {
      done ??= loop();
    },
    wake: () => sleeper.wake(),
    async stop() {
      stopping = true;
      self.wake();
      await done;
      await flow.idle();
    },
  };
  return self;
}
