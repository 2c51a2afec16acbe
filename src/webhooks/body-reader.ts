import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { AppError } from '../errors.js';
import { addressKey, SMALL_BODY_BYTES, type BodyBudget, type OverBudget } from './body-budget.js';
import { watchBodyDeadline } from './body-deadline.js';

/** How much one route may read, and from which budget; `setting` names the limit in the 413 message. */
export interface BodyLimit {
  maxBytes: number;
  setting: string;
  budget: BodyBudget;
}

/** What a request holds of the budget; give it back with `releaseBody` once answered. */
export interface HeldBody {
  address: string | undefined;
  bytes: number;
}

/** The Node request behind a Hono context (undefined under `app.request()` and other runtimes). */
export function incomingOf(c: Context): IncomingMessage | undefined {
  const env = c.env as { incoming?: IncomingMessage } | undefined;
  return env?.incoming && typeof env.incoming.on === 'function' ? env.incoming : undefined;
}

/** Start holding budget for this request: keyed by its client address (see `addressKey`). */
export function holdBody(c: Context): HeldBody {
  return { address: addressKey(incomingOf(c)?.socket?.remoteAddress), bytes: 0 };
}

/** Give back what `readLimitedBody` took for this request. */
export function releaseBody(budget: BodyBudget, held: HeldBody): void {
  budget.release(held.address, held.bytes);
  held.bytes = 0;
}

/** The client closed the connection mid-upload (Node's `aborted`, a reset socket, an aborted fetch stream). */
export function isClientGone(error: unknown): boolean {
  const e = error as { message?: string; code?: string; name?: string } | undefined;
  return e?.message === 'aborted' || e?.code === 'ECONNRESET' || e?.name === 'AbortError';
}

/** 413 for a body over the route's limit. */
export function tooLarge(limit: Pick<BodyLimit, 'maxBytes' | 'setting'>): AppError {
  return new AppError('payload_too_large', `The body is larger than ${limit.maxBytes} bytes (${limit.setting}). Send a smaller body.`);
}

const mib = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;

function overBudget(budget: BodyBudget, why: OverBudget): AppError {
  if (why === 'address')
    return new AppError(
      'unavailable',
      `Too many uploads in flight from your address (over ${mib(budget.perAddressBytes)} MiB of bodies at once, MAX_INFLIGHT_BODY_BYTES_PER_ADDRESS). Retry shortly; the provider retries by itself.`,
    );
  if (why === 'unreserved')
    return new AppError(
      'unavailable',
      `Too many large uploads in flight (bodies over ${SMALL_BODY_BYTES / 1024} KiB may hold ${mib(budget.maxBytes - budget.reservedBytes)} MiB of MAX_INFLIGHT_BODY_BYTES; the rest is kept for smaller ones). Retry shortly; the provider retries by itself.`,
    );
  return new AppError(
    'unavailable',
    `Too many uploads in flight (over ${mib(budget.maxBytes)} MiB of bodies at once, MAX_INFLIGHT_BODY_BYTES). Retry shortly; the provider retries by itself.`,
  );
}

/**
 * Read the body within the limit, taking each chunk from the budget as it
 * arrives: a declared `Content-Length` over the limit is refused before a byte
 * is read, but nothing is reserved on a declaration, so an idle socket holds
 * no budget. A body of at most `SMALL_BODY_BYTES` may take the budget's
 * reserve; every body must arrive within its allowance (`body-deadline.ts`).
 * Throws 413 past the limit, 503 past the budget, 408 past the allowance; a
 * client that goes away rejects with Node's `aborted` error.
 */
export function readLimitedBody(c: Context, limit: BodyLimit, held: HeldBody): Promise<Uint8Array> {
  const header = Number(c.req.header('content-length') ?? NaN);
  const declared = Number.isFinite(header) ? header : undefined;
  if (declared !== undefined && declared > limit.maxBytes) return Promise.reject(tooLarge(limit));
  let total = 0;
  /** Count one chunk in; throws when it does not fit. */
  const take = (bytes: number) => {
    total += bytes;
    if (total > limit.maxBytes) throw tooLarge(limit);
    const why = limit.budget.tryReserve(held.address, bytes, (declared ?? total) <= SMALL_BODY_BYTES);
    if (why) throw overBudget(limit.budget, why);
    held.bytes += bytes;
  };
  const watch = (onLate: (error: AppError) => void) => watchBodyDeadline(declared, () => total, onLate);
  const incoming = incomingOf(c);
  return incoming ? readIncoming(incoming, take, watch) : readStream(c.req.raw.body, take, watch);
}

/** Starts the body's deadline (`watchBodyDeadline`) and returns the function that stops it. */
type WatchDeadline = (onLate: (error: AppError) => void) => () => void;

/** Node's request read directly (no web stream): the receivers' hot path. */
function readIncoming(incoming: IncomingMessage, take: (bytes: number) => void, watch: WatchDeadline): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    if (incoming.readableEnded) return resolve(new Uint8Array(0));
    const chunks: Buffer[] = [];
    let settled = false;
    // The deadline fires from a timer, never before `finish` below exists.
    const stopWatching = watch((late) => finish(() => reject(late)));
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      stopWatching();
      incoming.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      settle();
    };
    const onData = (chunk: Buffer) => {
      try {
        take(chunk.byteLength);
      } catch (error) {
        finish(() => reject(error));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish(() => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    const onError = (error: Error) => finish(() => reject(error));
    const onClose = () => (incoming.readableEnded ? onEnd() : finish(() => reject(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }))));
    incoming.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
    if (incoming.destroyed) onClose();
  });
}

/** A fetch `Request`'s body (`app.request()` in tests): not framed by Content-Length, so the limit is counted here. */
async function readStream(stream: ReadableStream<Uint8Array> | null, take: (bytes: number) => void, watch: WatchDeadline): Promise<Uint8Array> {
  if (!stream) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  const reader = stream.getReader();
  let late: AppError | undefined;
  // A pending read() resolves as done once the reader is cancelled.
  const stopWatching = watch((error) => void ((late = error), reader.cancel().catch(() => undefined)));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (late) throw late;
      if (done) break;
      try {
        take(value.byteLength);
      } catch (error) {
        await reader.cancel().catch(() => undefined);
        throw error;
      }
      chunks.push(value);
    }
  } finally {
    stopWatching();
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}
