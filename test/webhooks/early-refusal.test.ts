import { describe, expect, it } from 'vitest';
import { createTestApp, countEvents } from '../helpers/app.js';
import { createPgliteDatabase } from '../helpers/db.js';

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
      const res = await app.request(`/webhooks/${source}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, duplex: 'half' } as RequestInit);
      expect(res.status).toBe(status); // had it waited for the body, this would never answer
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
      expect(await countEvents(db.db)).toBe(0);
      await body.cancel().catch(() => undefined);
    } finally {
      await db.close();
    }
  });
});
