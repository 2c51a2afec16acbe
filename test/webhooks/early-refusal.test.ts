import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { buildApp } from '../../src/http/build-app.js';
import { Metrics } from '../../src/metrics.js';
import { testConfig } from '../helpers/config.js';
import { createTestApp, countEvents } from '../helpers/app.js';
import { createPgliteDatabase } from '../helpers/db.js';
import { pollUntil } from '../helpers/spawn-hookrun.js';

/** A body that sends one chunk and then stalls for ever, like the review's slow uploads. */
const stalledBody = () =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"a":"' + 'x'.repeat(64 * 1024)));
    },
  });

describe('a delivery with no credentials is refused before its body is read', () => {
  it.each([
    ['payments', 400, 'missing_signature'],
    ['auth', 400, 'missing_signature'],
    ['database', 401, 'unauthorized'],
  ])('%s: %i %s while the upload still stalls', async (source, status, code) => {
    const db = await createPgliteDatabase();
    try {
      const { app } = createTestApp(db.db);
      const body = stalledBody();
      const res = await app.request(`/webhooks/${source}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(status); // had it waited for the body, this would never answer
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
      expect(await countEvents(db.db)).toBe(0);
      await body.cancel().catch(() => undefined);
    } finally {
      await db.close();
    }
  });
});

describe('bodies in flight are capped (MAX_INFLIGHT_BODY_BYTES)', () => {
  it('past the cap a new upload is 503 at once; when the stalled one ends, uploads are taken again', async () => {
    const db = await createPgliteDatabase();
    try {
      const { app } = createTestApp(db.db, { MAX_INFLIGHT_BODY_BYTES: '4096' });
      const signed = { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' };
      const stalled = stalledBodyOf(3000);
      const first = Promise.resolve(
        app.request('/webhooks/payments', {
          method: 'POST',
          headers: { ...signed, 'content-length': '3000' },
          body: stalled.body,
          duplex: 'half',
        } as RequestInit),
      );
      // Once the first upload has taken its 3,000 bytes, a second one does not fit in 4,096.
      const second = await pollUntil('a second upload refused', 5_000, async () => {
        const res = await app.request('/webhooks/payments', { method: 'POST', headers: { ...signed, 'content-length': '3000' }, body: 'x'.repeat(3000) });
        return res.status === 503 ? res : undefined;
      });
      expect(((await second.json()) as { error: { code: string; message: string } }).error).toMatchObject({
        code: 'unavailable',
        message: expect.stringContaining('Too many uploads in flight'),
      });
      stalled.abort(); // the client goes away
      expect((await first.catch(() => undefined))?.status ?? 'aborted').not.toBe(200);
      const third = await app.request('/webhooks/payments', { method: 'POST', headers: { ...signed, 'content-length': '3000' }, body: 'x'.repeat(3000) });
      expect(third.status).toBe(400); // read and verified again (the fake signature fails): the budget was given back
      expect(await countEvents(db.db)).toBe(0);
    } finally {
      await db.close();
    }
  });
});

describe('a body that stalls past its allowance', () => {
  it('is answered 408 request_timeout naming the rate, gives its budget back and stores nothing', { timeout: 20_000 }, async () => {
    const db = await createPgliteDatabase();
    try {
      const { app } = createTestApp(db.db, { MAX_INFLIGHT_BODY_BYTES: '4096' });
      const signed = { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00', 'content-length': '3000' };
      const stalled = stalledBodyOf(3000);
      // 3,000 bytes are allowed BODY_GRACE_MS plus a few ms: the answer comes from the server, not from the client giving up.
      const res = await app.request('/webhooks/payments', { method: 'POST', headers: signed, body: stalled.body, duplex: 'half' } as RequestInit);
      expect(res.status).toBe(408);
      expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({
        code: 'request_timeout',
        message: expect.stringContaining('The body arrived too slowly: 2999 of 3000 bytes'),
      });
      const next = await app.request('/webhooks/payments', { method: 'POST', headers: signed, body: 'x'.repeat(3000) });
      expect(next.status).toBe(400); // read and verified (the fake signature fails): the stalled body's 2,999 bytes were given back
      expect(await countEvents(db.db)).toBe(0);
    } finally {
      await db.close();
    }
  });
});

/** An upload that sends all but its last byte and stalls until `abort()` (the client going away). */
function stalledBodyOf(bytes: number): { body: ReadableStream<Uint8Array>; abort(error?: Error): void } {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      c.enqueue(new Uint8Array(bytes - 1));
    },
  });
  return { body, abort: (error: Error = new Error('the client went away')) => controller.error(error) };
}

describe('an upload the client aborts', () => {
  it('is one quiet debug line, not an error with a stack, and stores nothing', async () => {
    const db = await createPgliteDatabase();
    const lines: Array<{ level: number; msg: string; err?: { stack?: string } }> = [];
    const log = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    try {
      const config = testConfig();
      const { app } = buildApp({ config, db: db.db, clock: systemClock, log, metrics: new Metrics(), writer: new EventWriter(db.db) });
      const upload = stalledBodyOf(3000);
      const answer = Promise.resolve(
        app.request('/webhooks/payments', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
          body: upload.body,
          duplex: 'half',
        } as RequestInit),
      );
      upload.abort(new Error('aborted'));
      await answer.catch(() => undefined);
      expect(lines.filter((l) => l.level >= 50 || l.err?.stack)).toEqual([]);
      expect(lines.some((l) => l.msg === 'upload aborted by the client')).toBe(true);
      expect(await countEvents(db.db)).toBe(0);
    } finally {
      await db.close();
    }
  });
});
