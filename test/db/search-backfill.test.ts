import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { MIGRATIONS_FOLDER, type Database } from '../../src/db/database.js';
import { applyMigrations } from '../../src/db/migrator.js';
import { listEvents } from '../../src/db/events.js';
import { parsePayloadMatch } from '../../src/db/event-filter.js';
import { searchKeysOf } from '../../src/db/search-keys.js';
import { createEmptyPostgresDatabase } from '../helpers/db.js';

/** The migrations up to the one before search keys: the database a release before them left. */
const BEFORE_SEARCH_KEYS = '0004_one_delivery_model';
const folders: string[] = [];
function migrationsUpTo(tag: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'hookrun-migrations-'));
  folders.push(folder);
  cpSync(MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalPath = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: Array<{ tag: string }> };
  const last = journal.entries.findIndex((e) => e.tag === tag);
  writeFileSync(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, last + 1) }));
  return folder;
}
afterAll(() => folders.forEach((f) => rmSync(f, { recursive: true, force: true })));

/** Payloads as senders write them: ids, emails in any case, uuids, and strings that only look close to them. */
const PAYLOADS: unknown[] = [
  {
    id: 'evt_1NG8Du2eZvKYlo2CUI79vXWy',
    type: 'invoice.paid',
    data: {
      object: {
        id: 'in_1NG8Du2eZvKYlo2C4bX0aLQp',
        customer: 'cus_NffrFeUfNV2Hib',
        customer_email: 'Jenny.Rosen@Example.com',
        billing_reason: 'subscription_create',
        hosted_invoice_url: 'https://invoice.stripe.com/i/acct_1Nv0FGQ9RKHgCVdK/test_YWNjdF8x',
        lines: { data: [{ id: 'il_1NG8Du2eZvKYlo2CkX4Q', price: { id: 'price_1NG8Du2eZvKYlo2Cpro', nickname: 'Pro plan' } }] },
        metadata: { order: '123E4567-E89B-12D3-A456-426614174000', note: 'call me at ops@example.com please' },
      },
    },
  },
  {
    type: 'user.created',
    data: { id: 'user_2NNEqL2nrIRdJ194ndJqAHwEfxC', email_addresses: [{ email_address: 'ada@lovelace.dev' }], username: 'cancel_at_period_end' },
  },
  { n: 1, nothing: 'payment_intent', short: 'cus_123' },
];

const kinds: Array<{ name: string; open(): Promise<{ db: Database; close(): Promise<void> }> }> = [
  {
    name: 'pglite',
    async open() {
      const pglite = new PGlite();
      const db = await openDatabase({ pglite });
      return { db, close: () => pglite.close() };
    },
  },
];
if (process.env.TEST_DATABASE_URL) {
  kinds.push({
    name: 'postgres',
    async open() {
      const empty = await createEmptyPostgresDatabase();
      const db = await openDatabase({ databaseUrl: empty.url });
      return {
        db,
        close: async () => {
          await db.close();
          await empty.drop();
        },
      };
    },
  });
}

describe.each(kinds)('the upgrade that brings search keys, on $name', { timeout: 60_000 }, (kind) => {
  it('makes every stored event findable by the keys a new event of the same payload gets', async () => {
    const { db, close } = await kind.open();
    try {
      await applyMigrations(db, 'hookrun', migrationsUpTo(BEFORE_SEARCH_KEYS));
      for (const [i, payload] of PAYLOADS.entries())
        await db.query(`INSERT INTO hookrun.webhook_events (source, key, type, payload, status) VALUES ('payments', $1, 'x', $2::jsonb, 'processed')`, [
          `old_${i}`,
          JSON.stringify(payload),
        ]);
      expect((await db.migrate()).applied).toEqual([
        '0005_search_and_body_once',
        '0006_same_body_as',
        '0007_durable_steps',
        '0008_received_order',
        '0009_operator_audit',
      ]);

      const stored = await db.query<{ key: string; keys: string[] }>(
        `SELECT e.key, coalesce(array_agg(s.value ORDER BY s.value) FILTER (WHERE s.value IS NOT NULL), '{}') AS keys
         FROM hookrun.webhook_events e LEFT JOIN hookrun.event_search s ON s.event_id = e.id GROUP BY e.key ORDER BY e.key`,
      );
      expect(stored).toEqual(PAYLOADS.map((p, i) => ({ key: `old_${i}`, keys: searchKeysOf(JSON.stringify(p)).sort() })));
      expect(searchKeysOf(JSON.stringify(PAYLOADS[0]))).toContain('jenny.rosen@example.com');

      const found = await listEvents(db, { where: parsePayloadMatch('data.object.customer_email = jenny.rosen@example.com') });
      expect(found.events.map((e) => e.key)).toEqual(['old_0']);
    } finally {
      await close();
    }
  });
});
