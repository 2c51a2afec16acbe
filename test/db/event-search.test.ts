import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventWriter } from '../../src/db/event-writer.js';
import { listEvents, type ListEventsQuery } from '../../src/db/events.js';
import { parsePayloadMatch } from '../../src/db/event-filter.js';
import { MAX_SEARCH_KEYS, SEARCH_KEY_PATTERN, normaliseSearchKey, searchKeysOf } from '../../src/db/search-keys.js';
import type { Database } from '../../src/db/database.js';
import { databaseKinds, type TestDatabase } from '../helpers/db.js';

/** Every page of a listing, following the cursor: the ids in order. */
async function allIds(db: Database, query: ListEventsQuery): Promise<number[]> {
  const ids: number[] = [];
  let before: number | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const page = await listEvents(db, { ...query, before });
    ids.push(...page.events.map((e) => e.id));
    if (page.nextCursor === undefined) return ids;
    before = page.nextCursor;
  }
  throw new Error('more than 100 pages');
}

const EVENTS = 12_000;
/** A customer id as Stripe writes them: found through the search index. */
const customer = (n: number) => `cus_Qx81${String(n % 400).padStart(6, '0')}`;

describe('the search keys a payload carries', () => {
  it('are its ids, emails (lowercased) and uuids, once each, never its enum values or keys', () => {
    const payload = JSON.stringify({
      id: 'evt_1NG8Du2eZvKYlo2CUI79vXWy',
      type: 'invoice.paid',
      data: {
        object: {
          customer: 'cus_NffrFeUfNV2Hib',
          billing_reason: 'subscription_create',
          payment_intent: null,
          email: 'Jenny.Rosen@Example.com',
          again: 'cus_NffrFeUfNV2Hib',
          row: '123E4567-E89B-12D3-A456-426614174000',
        },
      },
    });
    expect(searchKeysOf(payload)).toEqual([
      'evt_1NG8Du2eZvKYlo2CUI79vXWy',
      'cus_NffrFeUfNV2Hib',
      'jenny.rosen@example.com',
      '123e4567-e89b-12d3-a456-426614174000',
    ]);
    expect(searchKeysOf(JSON.stringify({ ids: Array.from({ length: 100_000 }, (_, i) => `cus_A${String(i).padStart(8, '0')}`) }))).toHaveLength(32);
    expect(searchKeysOf(JSON.stringify({ big: 'x'.repeat(1 << 20) }))).toEqual([]);
  });

  it('are what one regular expression over the text finds, quotes escaped inside strings and text around them included', () => {
    const reference = (json: string): string[] => {
      const keys = new Set<string>();
      for (const match of json.matchAll(new RegExp(SEARCH_KEY_PATTERN, 'g'))) {
        if (keys.size === MAX_SEARCH_KEYS) break;
        keys.add(normaliseSearchKey(match[1]!));
      }
      return [...keys];
    };
    const pieces = fc.oneof(
      fc.constantFrom('cus_NffrFeUfNV2Hib', 'user_2NNEqL2nrIRdJ194ndJqAHwEfxC', 'cancel_at_period_end', 'Jenny.Rosen@Example.com', 'a@b.cc', '@', '_'),
      fc.constantFrom('123E4567-E89B-12D3-A456-426614174000', '123e4567_e89b-12d3-a456-426614174000', 'x'.repeat(36), '"', '\\"', ':', ','),
      fc.stringMatching(/^[a-z]{1,3}_[A-Za-z0-9]{6,10}$/),
      fc.string({ maxLength: 12 }),
    );
    const texts = fc.oneof(
      fc.array(pieces, { maxLength: 60 }).map((parts) => parts.join('')),
      fc.array(pieces, { maxLength: 60 }).map((parts) => JSON.stringify(parts)),
      fc.json(),
    );
    fc.assert(
      fc.property(texts, (text) => {
        expect(searchKeysOf(text)).toEqual(reference(text));
      }),
      { numRuns: 2000 },
    );
  });
});

describe.each(databaseKinds())('payload search on $name', (kind) => {
  let testDb: TestDatabase;
  beforeAll(async () => {
    testDb = await kind.create();
    const writer = new EventWriter(testDb.db);
    for (let start = 0; start < EVENTS; start += 1000)
      await Promise.all(
        Array.from({ length: 1000 }, (_, i) => {
          const n = start + i;
          const payload = {
            id: `evt_${n}`,
            data: {
              object: { customer: customer(n), email: n % 500 === 0 ? `Buyer${n}@Example.COM` : undefined, amount: n % 3, rare: n % 4001 === 0 ? 'yes' : 'no' },
            },
          };
          return writer.write({ source: 'payments', key: `evt_${n}`, type: 'invoice.paid', payloadJson: JSON.stringify(payload) });
        }),
      );
  }, 120_000);
  afterAll(() => testDb?.close());

  const expected = async (sql: string) =>
    (await testDb.db.query<{ id: string }>(`SELECT id FROM hookrun.webhook_events WHERE ${sql} ORDER BY id DESC`)).map((r) => Number(r.id));

  it('an id is found through the search index, whole, newest first, each once, across pages', async () => {
    const ids = await allIds(testDb.db, { where: parsePayloadMatch(`data.object.customer = ${customer(7)}`), limit: 7 });
    expect(ids).toEqual(await expected(`payload->'data'->'object'->>'customer' = '${customer(7)}'`));
    expect(ids).toHaveLength(EVENTS / 400);
    // The path is checked too: the same id under another key is not a match.
    expect(await allIds(testDb.db, { where: parsePayloadMatch(`data.object.email = ${customer(7)}`) })).toEqual([]);
  });

  it('an email is found whatever its case', async () => {
    for (const typed of ['buyer1000@example.com', 'Buyer1000@Example.COM', 'BUYER1000@EXAMPLE.COM'])
      expect(await allIds(testDb.db, { where: parsePayloadMatch(`data.object.email = ${typed}`) })).toEqual(await expected(`key = 'evt_1000'`));
  });

  it('any other value reads the payloads newest first, a slice at a time; a number matches its text', async () => {
    const rare = await allIds(testDb.db, { where: parsePayloadMatch('data.object.rare = yes') });
    expect(rare).toEqual(await expected(`payload->'data'->'object'->>'rare' = 'yes'`));
    const page = await listEvents(testDb.db, { where: parsePayloadMatch('data.object.amount = 2'), limit: 50 });
    expect(page.events.map((e) => e.id)).toEqual((await expected(`payload->'data'->'object'->>'amount' = '2'`)).slice(0, 50));
    const contains = await allIds(testDb.db, { where: parsePayloadMatch(`data.object.customer ~ Qx81000007`), source: 'payments' });
    expect(contains).toEqual(await expected(`payload->'data'->'object'->>'customer' = '${customer(7)}'`));
  });

  it('a payload search that runs out of its time budget answers what it found and how far it read; the next page goes on', async () => {
    const where = parsePayloadMatch('data.object.rare ~ yes');
    const first = await listEvents(testDb.db, { where, limit: 50 }, { budgetMs: 0 });
    expect(first.searchedTo).toBeGreaterThan(0);
    expect(first.nextCursor).toBe(first.searchedTo);
    const ids = [...first.events.map((e) => e.id)];
    let page = first;
    while (page.nextCursor !== undefined) {
      page = await listEvents(testDb.db, { where, limit: 50, before: page.nextCursor }, { budgetMs: 0 });
      ids.push(...page.events.map((e) => e.id));
    }
    expect(ids).toEqual(await expected(`payload->'data'->'object'->>'rare' = 'yes'`));
  });
});
