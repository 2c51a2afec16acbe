import type { Clock } from '../clock.js';
import type { Queryable } from '../db/database.js';
import type { ClaimedDelivery } from './claimed.js';
import { extendLeases } from './leases-sql.js';
import { messageOf } from '../errors.js';
import type { Logger } from '../log.js';

/** A running renewal of one batch's claims. */
export interface LeaseHeartbeat {
  /** Stop renewing; resolves once a renewal in flight has finished. */
  stop(): Promise<void>;
}

/**
 * Keep a batch's claims leased for as long as its handlers run: every third
 * of the lease, push `locked_until` one lease ahead. A handler slower than the
 * lease therefore never runs twice side by side (another instance only takes
 * an delivery whose worker stopped renewing: it crashed). One renewal is in
 * flight at a time; a failed one is logged and the next tick tries again.
 */
export function startLeaseHeartbeat(db: Queryable, claims: readonly ClaimedDelivery[], deps: { leaseMs: number; clock: Clock; log: Logger }): LeaseHeartbeat {
  const held = claims.map((c) => ({ id: c.id, attempts: c.attempts }));
  let inFlight: Promise<void> | undefined;
  const renew = async () => {
    try {
      await extendLeases(db, held, deps.clock.now() + deps.leaseMs);
    } catch (error) {
      deps.log.warn({ events: held.length, err: { message: messageOf(error) } }, 'lease renewal failed; retrying at the next heartbeat');
    }
  };
  const timer = setInterval(
    () => {
      inFlight ??= renew().finally(() => (inFlight = undefined));
    },
    Math.max(50, Math.floor(deps.leaseMs / 3)),
  );
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await inFlight;
    },
  };
}
