import type { Context } from 'hono';
import type { Clock } from '../clock.js';
import type { EventWriter, StoredEvent } from '../db/event-writer.js';
import { NotConfirmedError, RejectedPayloadError } from '../db/event-write-errors.js';
import { AppError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { BodyBudget } from './body-budget.js';
import { missingCredentials, type SourceVerifier } from './verifiers.js';

/** What a receiver needs; assembled once by the HTTP app. */
export interface ReceiveDeps {
  writer: EventWriter;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  toleranceSeconds: number;
  maxBodyBytes: number;
  dbTimeoutMs: number;
  /** Shared by the receivers of the app: bytes of bodies in flight, capped. */
  bodyBudget: BodyBudget;
}

const CONTENT_TYPES = {
  json: { pattern: /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i, name: 'application/json' },
  form: { pattern: /^application\/x-www-form-urlencoded\s*(;|$)/i, name: 'application/x-www-form-urlencoded' },
};

/** Read the body within the size limit, taking its bytes from the budget (`held.bytes` says how many to give back). */
async function readBody(c: Context, maxBytes: number, budget: BodyBudget, held: { bytes: number }): Promise<Uint8Array> {
  const take = (bytes: number) => {
    if (!budget.tryReserve(bytes)) throw overBudget(budget);
    held.bytes += bytes;
  };
  const declared = c.req.header('content-length');
  if (declared !== undefined) {
    if (Number(declared) > maxBytes) throw tooLarge(maxBytes);
    take(Number(declared) || 0);
    // Node frames the body by Content-Length, so it cannot outgrow what was declared: read it whole
    // through @hono/node-server's direct path (no web stream, no AbortSignal, no undici Request).
    const body = new Uint8Array(await c.req.raw.arrayBuffer());
    if (body.byteLength > maxBytes) throw tooLarge(maxBytes); // a fetch Request (tests) is not framed
    return body;
  }
  const stream = c.req.raw.body;
  if (!stream) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(maxBytes);
    }
    try {
      take(value.byteLength);
    } catch (error) {
      await reader.cancel().catch(() => undefined);
      throw error;
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

/** The client closed the connection mid-upload (Node's `aborted`, a reset socket, an aborted fetch stream). */
function isClientGone(error: unknown): boolean {
  const e = error as { message?: string; code?: string; name?: string } | undefined;
  return e?.message === 'aborted' || e?.code === 'ECONNRESET' || e?.name === 'AbortError';
}

function overBudget(budget: BodyBudget): AppError {
  return new AppError('unavailable', `Too many uploads in flight (over ${Math.round(budget.maxBytes / 1048576)} MiB of bodies at once, MAX_INFLIGHT_BODY_BYTES). Retry shortly; the provider retries by itself.`);
}

function tooLarge(maxBytes: number): AppError {
  return new AppError('payload_too_large', `The body is larger than ${maxBytes} bytes (MAX_BODY_BYTES).`);
}

/**
 * The receiver of one source: content type → body limit → verify the raw
 * bytes → commit to the inbox → 200. The event is committed before the answer
 * (DESIGN.md data flow); a duplicate answers 200 and is not stored again.
 */
export function createReceiver(source: string, verifier: SourceVerifier, deps: ReceiveDeps) {
  const rejected = deps.metrics.eventsReceived;
  // Bound once: prom-client hashes a label object on every inc() otherwise.
  const accepted = rejected.labels({ source, outcome: 'accepted', reason: '' });
  const duplicate = rejected.labels({ source, outcome: 'duplicate', reason: '' });
  const expected = CONTENT_TYPES[verifier.provider.body];
  return async (c: Context): Promise<Response> => {
    const held = { bytes: 0 };
    try {
      if (!verifier.ok) throw new AppError('not_configured', verifier.message);
      const contentType = c.req.header('content-type') ?? '';
      if (!expected.pattern.test(contentType)) {
        throw new AppError('unsupported_media_type', `Content-Type must be ${expected.name} (got "${contentType.slice(0, 100)}").`);
      }
      const missing = missingCredentials(verifier.provider, c.req.raw.headers);
      if (missing) throw missing;
      let body: Uint8Array;
      try {
        body = await readBody(c, deps.maxBodyBytes, deps.bodyBudget, held);
      } catch (error) {
        if (!(error instanceof AppError) && isClientGone(error)) {
          // Nobody is left to answer, and nothing went wrong here: one quiet line, no stack.
          rejected.inc({ source, outcome: 'rejected', reason: 'client_aborted' });
          deps.log.debug({ source }, 'upload aborted by the client');
          return new Response(null, { status: 400 });
        }
        throw error;
      }
      const delivery = verifier.verify({ body, headers: c.req.raw.headers, url: c.req.url, nowMs: deps.clock.now(), toleranceSeconds: deps.toleranceSeconds });
      let stored: StoredEvent;
      try {
        stored = await deps.writer.write({ source, ...delivery }, deps.dbTimeoutMs);
      } catch (error) {
        if (error instanceof RejectedPayloadError) throw new AppError('invalid_payload', error.message, { cause: error });
        if (!(error instanceof NotConfirmedError)) {
          deps.log.error({ source, key: delivery.key, err: { message: (error as Error).message } }, 'event not stored: database unavailable');
          throw new AppError('unavailable', 'The database is unavailable, so the event was not stored. Retry later; the provider retries by itself.', { cause: error });
        }
        deps.log.error({ source, key: delivery.key, err: { message: (error as Error).message } }, 'event not confirmed in time: its insert was already sent');
        throw new AppError('unavailable', 'The database did not confirm the event in time; it may have been stored. Retry: a retry of a stored event is answered as a duplicate.', { cause: error });
      }
      (stored.duplicate ? duplicate : accepted).inc();
      if (stored.duplicate) deps.log.debug({ source, key: delivery.key, id: stored.id }, 'duplicate delivery');
      return c.json({ received: true, id: stored.id, duplicate: stored.duplicate });
    } catch (error) {
      if (error instanceof AppError) {
        rejected.inc({ source, outcome: 'rejected', reason: error.code });
        if (error.code !== 'unavailable') deps.log.info({ source, code: error.code }, `webhook rejected: ${error.message}`);
      }
      throw error;
    } finally {
      deps.bodyBudget.release(held.bytes);
    }
  };
}
