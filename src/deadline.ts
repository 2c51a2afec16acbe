/**
 * `setTimeout` for a deadline on an answer: `expire` runs once `ms` have
 * passed and the event loop has then read the sockets and worker messages
 * that arrived meanwhile. A timer fires before that read, so after this
 * thread stalled (a long pause for garbage collection, a busy machine) an
 * answer that came in time would otherwise lose to its own deadline, and a
 * stored event would be answered 503. `clearTimeout` on the result stops it
 * until the timer has fired; after that, `expire` runs and must see for
 * itself whether the answer came (settling a settled promise does nothing).
 */
export function setAnswerDeadline(expire: () => void, ms: number): NodeJS.Timeout {
  return setTimeout(setImmediate, ms, expire);
}

/**
 * Settle with `promise`, or reject with `onTimeout()` after `ms` — whichever
 * comes first (an answer read after a stall of this thread still comes
 * first: see setAnswerDeadline). One timer and one promise per call: it sits
 * on the ingest hot path (a `Promise.race` + `finally` allocates three
 * more). The loser is not cancelled; callers that must stop work pass their
 * own AbortSignal.
 */
export function withDeadline<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const timer = setAnswerDeadline(() => {
      if (!settled) reject(onTimeout());
    }, ms);
    promise.then(
      (value) => {
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        settled = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
