import type { Database } from '../src/db/database.js';
import { searchKeysOf } from '../src/db/search-keys.js';

const DAY_MS = 86_400_000;
/** The filled events were received over this span, oldest first in id order, the newest at the fill's start. */
export const SEARCH_SPAN_MS = 30 * DAY_MS;
/** Rows per fill statement. */
const FILL_CHUNK = 200_000;
/** Distinct customers: `cus_` and n mod 50000 in 8 digits (an id the search keys take), so at 1,000,000 events each customer has 20. */
export const CUSTOMERS = 50_000;
/** The newest rows are still pending, as in a live inbox. */
const PENDING_TAIL = 100;

/**
 * Stripe-like invoice events (~1.3 KB of JSON each) written straight in SQL,
 * one INSERT … SELECT generate_series per chunk, with every index of the
 * shipped schema in place (so the indexes grow as they would in use). Row n:
 * source by n mod 11 (payments 6/11, billing-eu 3/11, shop 2/11), type by
 * n mod 7 (invoice.paid 2/7), status by n mod 199 (dead 1 %, failed 2 %,
 * ignored 5 %, processed the rest; the newest 100 pending), customer
 * `cus_<n mod 50000, 8 digits>`, email `user<n>@example.com`, amount_paid one of five
 * plan prices for 4/13 of the rows (900, 2900, 4200, 9900, 19900) and a
 * spread of usage amounts otherwise; received_at spread over 30 days in id
 * order ($3 = newest, $4 = span ms, $5 = final size). The pending tail is
 * queued in hookrun.new_events (stored, not yet turned into deliveries).
 */
const FILL_SQL = `
  INSERT INTO hookrun.webhook_events (id, source, key, type, payload, status, attempts, next_attempt_at, last_error, received_at, processed_at)
  SELECT n, x.source, 'evt_' || substr(x.h, 1, 24), x.type,
         format('{"id":"evt_%1$s","object":"event","api_version":"2024-06-20","created":%2$s,"type":"%3$s","livemode":false,"pending_webhooks":1,'
           '"request":{"id":"req_%4$s","idempotency_key":"%5$s"},"data":{"object":{"id":"in_%6$s","object":"invoice","customer":"cus_%7$s",'
           '"customer_email":"user%8$s@example.com","customer_name":"User %8$s","amount_due":%9$s,"amount_paid":%9$s,"amount_remaining":0,'
           '"currency":"usd","status":"paid","billing_reason":"subscription_cycle","subscription":"sub_%10$s",'
           '"hosted_invoice_url":"https://invoice.stripe.com/i/acct_1Nv0FGQ9RKHgCVdK/test_%11$s","lines":{"object":"list","data":[{"id":"il_%12$s",'
           '"object":"line_item","amount":%9$s,"currency":"usd","description":"1 × Pro (at $%13$s / month)","period":{"start":%2$s,"end":%14$s},'
           '"price":{"id":"price_1Pro%15$s","unit_amount":%9$s,"recurring":{"interval":"month","interval_count":1}},"quantity":1}],'
           '"has_more":false,"total_count":1,"url":"/v1/invoices/in_%6$s/lines"},"period_start":%2$s,"period_end":%14$s}}}',
           substr(x.h, 1, 24), x.created, x.type, substr(x.h, 9, 14), substr(md5(x.h), 1, 32), substr(x.h, 5, 24), lpad((n % ${CUSTOMERS})::text, 8, '0'), n,
           x.amount, substr(md5(x.h || 's'), 1, 24), substr(md5(x.h || 'u'), 1, 32), substr(x.h, 3, 24), to_char(x.amount / 100.0, 'FM999990.00'),
           x.created + 2592000, n % 5)::json,
         x.status, CASE x.status WHEN 'pending' THEN 0 WHEN 'dead' THEN 5 WHEN 'failed' THEN 2 ELSE 1 END,
         CASE x.status WHEN 'failed' THEN x.r + interval '10 minutes' ELSE x.r END,
         CASE WHEN x.status IN ('failed', 'dead') THEN 'handler threw: upstream answered 503' END,
         x.r, CASE WHEN x.status IN ('processed', 'ignored') THEN x.r + (5 + n % 200) * interval '1 millisecond' END
  FROM generate_series($1::bigint, $2::bigint) AS n
  CROSS JOIN LATERAL (
    SELECT md5(n::text) AS h,
           $3::timestamptz - ($4::float8 * (1 - n::float8 / $5::float8)) * interval '1 millisecond' AS r,
           extract(epoch FROM $3::timestamptz)::bigint - ($4::bigint * ($5::bigint - n) / $5::bigint) / 1000 AS created,
           (ARRAY['payments', 'payments', 'payments', 'payments', 'payments', 'payments', 'billing-eu', 'billing-eu', 'billing-eu', 'shop', 'shop'])[1 + n % 11] AS source,
           (ARRAY['invoice.paid', 'invoice.paid', 'invoice.payment_failed', 'invoice.finalized', 'customer.subscription.updated', 'charge.succeeded',
                  'checkout.session.completed'])[1 + n % 7] AS type,
           CASE WHEN n > $5::bigint - ${PENDING_TAIL} THEN 'pending' WHEN n % 199 < 2 THEN 'dead' WHEN n % 199 < 6 THEN 'failed'
                WHEN n % 199 < 16 THEN 'ignored' ELSE 'processed' END AS status,
           CASE WHEN n % 13 < 4 THEN (ARRAY[900, 2900, 4200, 9900, 19900])[1 + n % 17 % 5] ELSE 100 + (n * 7919) % 99000 END AS amount
  ) AS x`;

/** Events read back per statement while their search keys are written. */
const KEYS_CHUNK = 5_000;

/**
 * Write the search keys of the stored events `first`..`last` (ids) into
 * hookrun.event_search, read off each payload's text by the function the
 * insert uses (searchKeysOf): what the insert would have written beside them.
 * (PostgreSQL's regular expressions, as in the upgrade migration's backfill,
 * take over a millisecond per event here.)
 */
export async function fillSearchKeys(db: Database, first: number, last: number): Promise<void> {
  for (let from = first; from <= last; from += KEYS_CHUNK) {
    const rows = await db.query<{ id: number | string; payload: string }>(
      'SELECT id, payload::text AS payload FROM hookrun.webhook_events WHERE id BETWEEN $1::bigint AND $2::bigint',
      [from, Math.min(last, from + KEYS_CHUNK - 1)],
    );
    const values: string[] = [];
    const ids: number[] = [];
    for (const row of rows) {
      for (const value of searchKeysOf(row.payload)) {
        values.push(value);
        ids.push(Number(row.id));
      }
    }
    if (values.length > 0) await db.query('INSERT INTO hookrun.event_search (value, event_id) SELECT * FROM unnest($1::text[], $2::bigint[])', [values, ids]);
  }
}

/** When the filled events end (the newest was received at `newestAt`) and how many there are. */
export interface SearchFill {
  newestAt: number;
  events: number;
}

/** When event n of the fill was received (the formula of FILL_SQL), to aim a time range at it. */
export function receivedAtOf(fill: SearchFill, n: number): Date {
  return new Date(fill.newestAt - SEARCH_SPAN_MS * (1 - n / fill.events));
}

/** Fill ids 1..events into an empty, migrated database, then VACUUM ANALYZE (what autovacuum leaves); ms of each. */
export async function fillSearchEvents(db: Database, fill: SearchFill, progress: (line: string) => void): Promise<{ insertMs: number; vacuumMs: number }> {
  const started = performance.now();
  for (let first = 1; first <= fill.events; first += FILL_CHUNK) {
    const last = Math.min(fill.events, first + FILL_CHUNK - 1);
    await db.query(FILL_SQL, [first, last, new Date(fill.newestAt).toISOString(), SEARCH_SPAN_MS, fill.events]);
    await fillSearchKeys(db, first, last);
    progress(`search: filled ${last.toLocaleString('en-US')} events (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  await db.query(`INSERT INTO hookrun.new_events (event_id) SELECT id FROM hookrun.webhook_events WHERE status = 'pending'`);
  await db.query(`SELECT setval(pg_get_serial_sequence('hookrun.webhook_events', 'id'), $1::bigint)`, [fill.events]);
  const insertMs = performance.now() - started;
  const vacuumStarted = performance.now();
  await db.query('VACUUM ANALYZE hookrun.webhook_events');
  await db.query('VACUUM ANALYZE hookrun.event_search');
  await db.query('VACUUM ANALYZE hookrun.new_events');
  return { insertMs, vacuumMs: performance.now() - vacuumStarted };
}

/** The on-disk size of webhook_events' heap, its TOAST, event_search's heap, and each index of the two. */
export interface SearchSizes {
  heapBytes: number;
  toastBytes: number;
  searchKeysBytes: number;
  indexes: Array<{ name: string; bytes: number }>;
}

/** pg_relation_size of the table, its TOAST table, the search keys' table and every index on the two (largest first). */
export async function searchSizes(db: Database): Promise<SearchSizes> {
  const [table] = await db.query<{ heap: string; toast: string; keys: string }>(
    `SELECT pg_relation_size(c.oid) AS heap, coalesce(pg_relation_size(NULLIF(c.reltoastrelid, 0)), 0) AS toast,
            pg_relation_size('hookrun.event_search'::regclass) AS keys
     FROM pg_class c WHERE c.oid = 'hookrun.webhook_events'::regclass`,
  );
  const indexes = await db.query<{ name: string; bytes: string }>(
    `SELECT i.indexrelid::regclass::text AS name, pg_relation_size(i.indexrelid) AS bytes
     FROM pg_index i WHERE i.indrelid IN ('hookrun.webhook_events'::regclass, 'hookrun.event_search'::regclass) ORDER BY pg_relation_size(i.indexrelid) DESC`,
  );
  return {
    heapBytes: Number(table!.heap),
    toastBytes: Number(table!.toast),
    searchKeysBytes: Number(table!.keys),
    indexes: indexes.map((r) => ({ name: r.name.replace(/^hookrun\./, ''), bytes: Number(r.bytes) })),
  };
}
