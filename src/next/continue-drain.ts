import { messageOf } from '../errors.js';
import type { DrainReport } from '../service-drain.js';

/** The header of a drain request hookrun sends itself: which pass of a burst it is (1, 2, …). */
export const CONTINUE_HEADER = 'x-hookrun-continue';

/** A burst continues for at most this many passes in a row; then the scheduled drain takes what is left. */
export const MAX_CONTINUATIONS = 20;

/** What continuing a burst needs: where the drain route is, its secret, and a log. */
export interface Continuation {
  /** The drain route's URL on this deployment (the request's origin, the mount, the drain path). */
  drainUrl: string;
  /** CRON_SECRET, or undefined when it is not set (nothing can continue then). */
  secret: string | undefined;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void } | undefined;
}

/** The pass number a request carries, or 0 for a request from anyone else (Vercel Cron, a person). */
export function continuationOf(request: Request): number {
  const hop = Number(request.headers.get(CONTINUE_HEADER));
  return Number.isInteger(hop) && hop > 0 ? hop : 0;
}

/**
 * A pass that ended with work left calls the drain route of its own
 * deployment, authenticated with CRON_SECRET: a burst drains pass after pass
 * instead of waiting for the schedule (a day on Vercel's Hobby plan). The
 * called drain answers 202 at once and works after its answer, so this waits
 * only for that answer. `hop` is the pass being asked for; past
 * MAX_CONTINUATIONS the chain stops and the scheduled drain goes on.
 */
export async function continueBurst(report: DrainReport, hop: number, to: Continuation): Promise<void> {
  if (!report.budgetExhausted) return;
  if (hop > MAX_CONTINUATIONS) {
    to.log?.info({ passes: MAX_CONTINUATIONS }, 'work is still left after a burst of drain passes; the scheduled drain takes it');
    return;
  }
  if (to.secret === undefined) {
    to.log?.warn({}, 'work is left after this pass and CRON_SECRET is not set: it waits for the next request or drain');
    return;
  }
  try {
    const res = await fetch(to.drainUrl, {
      headers: { authorization: `Bearer ${to.secret}`, [CONTINUE_HEADER]: String(hop) },
      signal: AbortSignal.timeout(10_000),
    });
    await res.body?.cancel();
    if (res.status !== 202)
      to.log?.warn(
        { status: res.status, url: to.drainUrl },
        'the drain route did not take the rest of the burst (deployment protection in front of it?); the scheduled drain takes it',
      );
  } catch (error) {
    to.log?.warn(
      { err: { message: messageOf(error) }, url: to.drainUrl },
      'could not call the drain route for the rest of the burst; the scheduled drain takes it',
    );
  }
}
