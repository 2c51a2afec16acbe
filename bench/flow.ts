import { openDatabase } from '../src/db/client.js';
import type { Database } from '../src/db/database.js';
import { HandlerRegistry } from '../src/deliveries/registry.js';
import { blockedHandlers, blockedStarts, fillBlockedBacklog, FLOW_SOURCE } from './flow-fill.js';
import { measureRate, type FlowRateFigures } from './flow-rate.js';
import { drain, figures, type FlowDrainFigures, type Inbox } from './flow-drain.js';
import { runKeysGone, type KeysGoneFigures } from './flow-keys.js';
import { createDatabase } from './servers.js';
import { spread, type Spread } from './stats.js';

/** Flow control's figures, or why they could not be measured. */
export type FlowFigures =
  | { available: false; reason: string }
  | {
      available: true;
      /** Events per drain, and the blocked backlog beside the second inbox. */
      events: number;
      backlog: { deliveries: number; keys: number; fillMs: number };
      empty: FlowDrainFigures;
      withBacklog: FlowDrainFigures;
      /** Each round's backlog drain rate over the empty one's just before it (pairs run back to back: less noise than the medians). */
      pairRatio: Spread;
      /** Deliveries of the blocked handlers started during the drains: 0 when their limits held. */
      blockedStarted: number;
      rate: FlowRateFigures;
      /** The flow claim after many distinct keys came and went, against a fresh database. */
      keysGone: KeysGoneFigures;
    };

export interface FlowSizes {
  events: number;
  deliveries: number;
  keys: number;
  /** Distinct keys that come and go before the keyed drains. */
  goneKeys: number;
  rounds: number;
  rate: { limit: number; seconds: number };
}

const UNLIMITED = 'bench-unlimited';

async function processedOk(db: Database, expected: number): Promise<void> {
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM hookrun.webhook_events WHERE source = $1 AND type = 'item.created' AND status = 'processed'`,
    [FLOW_SOURCE],
  );
  if (Number(row!.n) !== expected) throw new Error(`flow: ${row!.n} of ${expected} drained events processed`);
}

/**
 * Flow control on PostgreSQL. (1) The cost of a big waiting backlog to
 * everything else: the same drain (events of a handler without flow
 * options) on an empty inbox and beside `deliveries` pending deliveries of
 * two handlers no claim can start, registered in the worker as in
 * production; turn about, after a warm-up drain of each. (2) A handler
 * limited to `rate.limit`/s, run for `rate.seconds`.
 */
export async function runFlow(baseUrl: string | undefined, sizes: FlowSizes, progress: (line: string) => void): Promise<FlowFigures> {
  if (!baseUrl) return { available: false, reason: 'PostgreSQL only: set BENCH_DATABASE_URL' };
  const created = [await createDatabase(baseUrl, 'flowempty'), await createDatabase(baseUrl, 'flowbacklog')];
  const opened: Database[] = [];
  try {
    for (const database of created) opened.push(await openDatabase({ databaseUrl: database.url }));
    for (const db of opened) await db.migrate();
    const unlimited = () => new HandlerRegistry().on(FLOW_SOURCE, 'item.created', async () => undefined, { name: UNLIMITED, isolated: true });
    const inboxes: Inbox[] = [
      { label: 'empty', handler: UNLIMITED, db: opened[0]!, handlers: unlimited(), perSecond: [], hookrunUs: [], postgresUs: [], claims: [], flowClaims: [] },
      {
        label: 'backlog',
        handler: UNLIMITED,
        db: opened[1]!,
        handlers: blockedHandlers(unlimited()),
        perSecond: [],
        hookrunUs: [],
        postgresUs: [],
        claims: [],
        flowClaims: [],
      },
    ];
    // The fill's statements (VACUUM ANALYZE of a million rows) outlast the production statement_timeout; the worker keeps it.
    const filler = await openDatabase({ databaseUrl: created[1]!.url, poolSize: 1, queryTimeoutMs: 1_800_000 });
    const fillMs = await fillBlockedBacklog(filler, sizes, progress).finally(() => filler.close());
    progress(`flow: backlog of ${sizes.deliveries.toLocaleString('en-US')} deliveries over ${sizes.keys} keys in ${(fillMs / 1000).toFixed(1)} s`);
    const warmUp = Math.max(200, Math.floor(sizes.events / 10));
    for (const inbox of inboxes) await drain(inbox, warmUp, 'warm', false);
    for (let round = 1; round <= sizes.rounds; round++) {
      for (const inbox of inboxes) {
        const perSecond = await drain(inbox, sizes.events, `r${round}`, true);
        progress(`flow round ${round}/${sizes.rounds} ${inbox.label}: ${sizes.events} events drained, ${perSecond.toFixed(0)}/s`);
      }
    }
    for (const inbox of inboxes) await processedOk(inbox.db, warmUp + sizes.events * sizes.rounds);
    const blockedStarted = await blockedStarts(opened[1]!, sizes.keys);
    const rate = await measureRate(baseUrl, sizes.rate, progress);
    const keysGone = await runKeysGone(baseUrl, { events: sizes.events, keys: sizes.goneKeys, rounds: sizes.rounds }, progress);
    return {
      available: true,
      events: sizes.events,
      backlog: { deliveries: sizes.deliveries, keys: sizes.keys, fillMs },
      empty: figures(inboxes[0]!),
      withBacklog: figures(inboxes[1]!),
      pairRatio: spread(inboxes[1]!.perSecond.map((rate, i) => rate / inboxes[0]!.perSecond[i]!)),
      blockedStarted,
      rate,
      keysGone,
    };
  } finally {
    for (const db of opened) await db.close();
    for (const database of created) await database.drop();
  }
}
