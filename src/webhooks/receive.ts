import type { Context } from 'hono';
import type { Clock } from '../clock.js';
import type { EventWriter, StoredEvent } from '../db/event-writer.js';
import { NotConfirmedError, RejectedPayloadError } from '../db/event-write-errors.js';
import { AppError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { RejectionLog } from '../rejection-log.js';
import type { SenderRejectionSink } from '../issues/rejection-counter.js';
import { SPAN_ATTRIBUTES as ATTR } from '../telemetry/tracer.js';
import type { BodyBudget } from './body-budget.js';
import { holdBody, incomingOf, isClientGone, readLimitedBody, releaseBody } from './body-reader.js';
import { keptRequest } from './request-record.js';
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
  /** Shared by the receivers and the other body-reading routes of the app: bytes of bodies in flight, capped, per address too. */
  bodyBudget: BodyBudget;
  /** Refusals: counted by route and reason, logged a few a minute. */
  rejections: RejectionLog;
  /** Refusals counted per minute into the database, for the Senders page and the sender issues. */
  senderRejections?: SenderRejectionSink;
}

const CONTENT_TYPES = {
  json: { pattern: /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i, name: 'application/json' },
  form: { pattern: /^application\/x-www-form-urlencoded\s*(;|$)/i, name: 'application/x-www-form-urlencoded' },
};

/**
 * The receiver of one source: content type → body limit → verify the raw
 * bytes → commit to the inbox → 200. The event is committed before the answer
 * so an acknowledged event survives a crash; a duplicate answers 200 and is not stored again.
 */
export function createReceiver(source: string, verifier: SourceVerifier, deps: ReceiveDeps) {
  const rejected = deps.metrics.eventsReceived;
  // Bound once: prom-client hashes a label object on every inc() otherwise.
  const accepted = rejected.labels({ source, outcome: 'accepted', reason: '' });
  const duplicate = rejected.labels({ source, outcome: 'duplicate', reason: '' });
  const suspectedReplay = deps.metrics.suspectedReplays.labels({ source });
  const expected = CONTENT_TYPES[verifier.provider.body];
  const route = `/webhooks/${source}`;
  const limit = { maxBytes: deps.maxBodyBytes, setting: 'MAX_BODY_BYTES', budget: deps.bodyBudget };
  return async (c: Context): Promise<Response> => {
    const held = holdBody(c);
    const span = deps.metrics.tracer?.startSpan(`POST ${route}`, 'server', { 'http.request.method': 'POST', 'http.route': route, [ATTR.eventSource]: source });
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
        body = await readLimitedBody(c, limit, held);
      } catch (error) {
        if (!(error instanceof AppError) && isClientGone(error)) {
          // Nobody is left to answer, and nothing went wrong here: one quiet line, no stack.
          rejected.inc({ source, outcome: 'rejected', reason: 'client_aborted' });
          deps.log.debug({ source }, 'upload aborted by the client');
          span?.setAttributes({ [ATTR.outcome]: 'rejected', 'error.type': 'client_aborted' });
          span?.end();
          return new Response(null, { status: 400 });
        }
        throw error;
      }
      const nowMs = deps.clock.now();
      const delivery = verifier.verify({ body, headers: c.req.raw.headers, url: c.req.url, nowMs, toleranceSeconds: deps.toleranceSeconds });
      const request = keptRequest(verifier.provider, c.req.raw.headers, body, nowMs, incomingOf(c)?.rawHeaders);
      let stored: StoredEvent;
      try {
        stored = await deps.writer.write({ source, ...delivery, request }, deps.dbTimeoutMs);
      } catch (error) {
        if (error instanceof RejectedPayloadError) throw new AppError('invalid_payload', error.message, { cause: error });
        if (!(error instanceof NotConfirmedError)) {
          deps.log.error({ source, key: delivery.key, err: { message: (error as Error).message } }, 'event not stored: database unavailable');
          throw new AppError('unavailable', 'The database is unavailable, so the event was not stored. Retry later; the provider retries by itself.', {
            cause: error,
          });
        }
        deps.log.error({ source, key: delivery.key, err: { message: (error as Error).message } }, 'event not confirmed in time: its insert was already sent');
        throw new AppError(
          'unavailable',
          'The database did not confirm the event in time; it may have been stored. Retry: a retry of a stored event is answered as a duplicate.',
          { cause: error },
        );
      }
      (stored.duplicate ? duplicate : accepted).inc();
      span?.setAttributes({
        [ATTR.eventType]: delivery.type,
        [ATTR.eventKey]: delivery.key,
        [ATTR.eventId]: stored.id,
        [ATTR.duplicate]: stored.duplicate,
        [ATTR.outcome]: stored.duplicate ? 'duplicate' : 'accepted',
        'http.response.status_code': 200,
      });
      span?.end();
      if (stored.duplicate) deps.log.debug({ source, key: delivery.key, id: stored.id }, 'duplicate delivery');
      if (stored.sameBodyAs !== undefined) {
        // Stored and handled all the same: two genuine events can share a body; an operator judges from the event page.
        suspectedReplay.inc();
        deps.log.warn(
          { source, key: delivery.key, type: delivery.type, id: stored.id, sameBodyAs: stored.sameBodyAs },
          'suspected replay: the same signed body as an earlier event, under a new delivery id',
        );
      }
      return c.json({ received: true, id: stored.id, duplicate: stored.duplicate });
    } catch (error) {
      span?.setAttributes({ [ATTR.outcome]: 'rejected' });
      span?.end(error);
      if (error instanceof AppError) {
        rejected.inc({ source, outcome: 'rejected', reason: error.code });
        deps.senderRejections?.add(source, error.code);
        if (error.code === 'unavailable') deps.rejections.counted(route, error.code);
        else deps.rejections.rejected(route, error.code, { source, code: error.code, client: held.address }, `webhook rejected: ${error.message}`);
      }
      throw error;
    } finally {
      releaseBody(deps.bodyBudget, held);
    }
  };
}
