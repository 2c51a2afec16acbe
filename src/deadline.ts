/**
 * Settle with `promise`, or reject with `onTimeout()` after `ms` — whichever
 * comes first. One timer and one promise per call: it sits on the ingest hot
 * path (a `Promise.race` + `finally` allocates three more). The loser is not
 * cancelled; callers that must stop work pass their own AbortSignal.
 */
export function withDeadline<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
