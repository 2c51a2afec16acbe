import { setAnswerDeadline } from '../deadline.js';
import { AppError } from '../errors.js';

/** What every body gets before its rate counts: a connection's slow start, a busy sender. */
export const BODY_GRACE_MS = 5_000;

/**
 * The slowest a body may arrive after the grace. A sender's own network sends
 * a webhook far faster; at this rate a body of the default `MAX_BODY_BYTES`
 * (1 MiB) is cut after 13 s, before Node's 15 s request time-out closes the
 * socket without a word.
 */
export const MIN_BODY_BYTES_PER_SECOND = 128 * 1024;

/** How long a body of `bytes` may take to arrive, from the end of its headers. */
export function bodyAllowanceMs(bytes: number): number {
  return BODY_GRACE_MS + Math.ceil((bytes / MIN_BODY_BYTES_PER_SECOND) * 1000);
}

function tooSlow(received: number, declaredBytes: number | undefined, elapsedMs: number): AppError {
  const of = declaredBytes === undefined ? '' : ` of ${declaredBytes}`;
  return new AppError(
    'request_timeout',
    `The body arrived too slowly: ${received}${of} bytes in ${Math.round(elapsedMs / 100) / 10} s; a body must arrive within ` +
      `${BODY_GRACE_MS / 1000} s plus 1 s per ${MIN_BODY_BYTES_PER_SECOND / 1024} KiB. Send the whole body at once; the provider retries by itself.`,
  );
}

/**
 * Calls `onLate` with a 408 once a body has taken longer than its allowance,
 * so an upload that stalls or drips gives back its share of the in-flight
 * budget, whatever it declared and however many addresses send such uploads.
 * The allowance is the declared size's; a chunked body's is what it has sent
 * so far (read when the timer fires, so one that keeps arriving keeps its
 * time, up to the route's limit). Returns the function that stops watching.
 */
export function watchBodyDeadline(declaredBytes: number | undefined, received: () => number, onLate: (error: AppError) => void): () => void {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const wait = (ms: number) => {
    timer = setAnswerDeadline(check, ms); // what arrived while this thread stalled is counted first
    timer.unref();
  };
  const check = () => {
    if (stopped) return;
    const elapsed = performance.now() - started;
    const allowed = bodyAllowanceMs(declaredBytes ?? received());
    if (elapsed < allowed) return wait(allowed - elapsed);
    timer = undefined;
    onLate(tooSlow(received(), declaredBytes, elapsed));
  };
  wait(bodyAllowanceMs(declaredBytes ?? 0));
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
