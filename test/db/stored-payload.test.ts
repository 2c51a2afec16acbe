import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { readEventFeed } from '../../src/db/event-feed.js';
import { getEvent } from '../../src/db/events.js';
import { HandlerRegistry } from '../../src/deliveries/registry.js';
import { claimAndDie } from '../inbox/fixtures.js';
import { mayHoldUnsafeInteger, parseExactJson, parseStoredPayload } from '../../src/db/stored-payload.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { seedDataDir } from '../helpers/spawn-hookrun.js';

/** A Supabase change of a row whose int8 id and a snowflake are beyond 2^53, as PostgreSQL sends them. */
const BIG = `{"type":"INSERT","table":"orders","record":{"id":9223372036854775807,"snowflake":1234567890123456789,"neg":-9007199254740993,"small":42,"price":19.99,"code":"0000000000000000001"},"old_record":null}`;

describe('parseStoredPayload', () => {
  it('keeps integers beyond 2^53 as strings of their exact digits, everything else as JSON.parse gives it', () => {
    expect(parseStoredPayload(BIG)).toEqual({
      type: 'INSERT',
      table: 'orders',
      record: { id: '9223372036854775807', snowflake: '1234567890123456789', neg: '-9007199254740993', small: 42, price: 19.99, code: '0000000000000000001' },
      old_record: null,
    });
    // The largest safe integer, floats with many digits and exponents stay numbers.
    expect(parseStoredPayload('[9007199254740991, 1.2345678901234567, 12345678901234567e2, [1e400]]')).toEqual(
      JSON.parse('[9007199254740991, 1.2345678901234567, 12345678901234567e2, [1e400]]'),
    );
    // Text without a long run of digits is JSON.parse's own result.
    const ordinary = '{"id":"evt_1","created":1767225600,"amount":2000,"nested":[{"a":null,"b":true}]}';
    expect(parseStoredPayload(ordinary)).toEqual(JSON.parse(ordinary));
  });

  it('takes the exact parser only for a number of 16 digits or more, not for long digits inside a string', () => {
    for (const text of [
      '12345678901234567',
      ' -12345678901234567',
      '[1,12345678901234567]',
      '[ 12345678901234567]',
      '{"a": 12345678901234567}',
      '{"a":\n\t-12345678901234567}',
    ])
      expect(mayHoldUnsafeInteger(text), text).toBe(true);
    // Ids and snowflakes sent as strings are JSON.parse's (exact for strings). A string with `,1234…` in it takes the exact
    // parser: slower, as exact.
    for (const text of [
      '{"id":"1234567890123456789"}',
      '{"id":"evt_3612847500000000000001"}',
      '{"n":1.12345678901234567}',
      '{"a":1,"b":"ab1234567890123456789"}',
    ])
      expect(mayHoldUnsafeInteger(text), text).toBe(false);
    const snowflakes = '{"id":"1234567890123456789","guild":{"id":"9223372036854775807"},"n":9007199254740993}';
    expect(parseStoredPayload(snowflakes)).toEqual({ id: '1234567890123456789', guild: { id: '9223372036854775807' }, n: '9007199254740993' });
    expect(parseExactJson('{"id":"1234567890123456789","amount":2000}')).toEqual({ id: '1234567890123456789', amount: 2000 });
  });
});

describe.each(databaseKinds())('a stored integer beyond 2^53 reaches readers exactly ($name)', (kind) => {
  const t = useTestDatabase(kind);

  it('handlers (the claim), the event detail (admin API, events show, dashboard) and the event stream see its exact digits', async () => {
    const [row] = await t.db.query<{ id: number }>(
      `WITH e AS (INSERT INTO hookrun.webhook_events (source, key, type, payload) VALUES ('database', 'chg_big', 'INSERT', $1::jsonb) RETURNING id),
       q AS (INSERT INTO hookrun.new_events (event_id) SELECT id FROM e)
       SELECT id FROM e`,
      [BIG],
    );
    const id = Number(row!.id);
    const exact = { id: '9223372036854775807', snowflake: '1234567890123456789' };
    const detail = await getEvent(t.db, id);
    expect((detail!.payload as { record: object }).record).toMatchObject(exact);
    const [streamed] = await readEventFeed(t.db, { afterId: 0, limit: 10, lateWindowSeconds: 0, alreadySent: [], lateFloorId: 0 });
    expect((streamed!.payload as { record: object }).record).toMatchObject(exact);
    const [claimed] = await claimAndDie(
      t.db,
      new HandlerRegistry().on('database', 'INSERT', async () => undefined, { name: 'h' }),
      Date.now(),
    );
    expect((claimed!.event.payload as { record: object }).record).toMatchObject(exact);
    // The JSON the admin API writes carries the digits.
    expect(JSON.stringify(detail!.payload)).toContain('"9223372036854775807"');
  });
});

describe('the embedded database on its own thread (a data dir)', () => {
  it('parses json on the thread the same way: the exact digits cross to the main thread', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hookrun-exact-'));
    try {
      await seedDataDir(dataDir);
      const db = await openDatabase({ dataDir, fsync: false });
      try {
        const [row] = await db.query<{ payload: { record: object } }>(`SELECT $1::jsonb AS payload`, [BIG]);
        expect(row!.payload.record).toMatchObject({ id: '9223372036854775807', snowflake: '1234567890123456789', small: 42 });
      } finally {
        await db.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
