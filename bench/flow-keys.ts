import { openDatabase } from '../src/db/client.js';
import type { Database } from '../src/db/database.js';
import { HandlerRegistry } from '../src/deliveries/registry.js';
import { drain, figures, type FlowDrainFigures, type Inbox } from './flow-drain.js';
import { FLOW_SOURCE } from './flow-fill.js';
import { parseFlowOptions } from '../src/flow/options.js';
import { createDatabase } from './servers.js';
import { spread, type Spread } from './stats.js';

/** Keys that came and went: the same drain of a keyed handler on a fresh database and after `keys` distinct keys. */
export interface KeysGoneFigures {
  keys: number;
  /** How long the fill took, and the engine's sweep of the idle keys as it ran beside the first drain. */
  fillMs: number;
  empty: FlowDrainFigures;
  afterKeys: FlowDrainFigures;
  /** Each round's drain after the keys over the fresh drain just before it. */
  pairRatio: Spread;
  /** Rows of the gone keys left once the drains ended: 0 when the sweep removed them all. */
  rowsLeft: number;
}

const KEYED = 'bench-keyed';

/** Every event its own key, a rate limit per key that never holds one back: each claim writes key rows, and their windows close. */
const KEYED_PLAN = parseFlowOptions({ rateLimit: { limit: 100, period: '1s', key: (payload: { n: number }) => `n${payload.n}` } })!;
const keyed = () => new HandlerRegistry().on(FLOW_SOURCE, 'item.created', async () => undefined, { name: KEYED, isolated: true, flow: KEYED_PLAN });

/**
 * The key rows `keys` distinct keys leave when their last delivery ended and
 * their rate window closed: idle, waiting for the sweep that removes them
 * (a key with work pending has its deliveries, not only a row).
 */
async function fillGoneKeys(db: Database, keys: number): Promise<void> {
  for (let from = 0; from < keys; from += 200_000)
    await db.query(
      `INSERT INTO hookrun.flow_keys (handler, flow_key, tat, idle_until)
       SELECT $1, 'gone-' || n, now() - interval '1 minute', now() - interval '1 minute' FROM generate_series($2::int, $3::int) AS n`,
      [KEYED, from, Math.min(from + 200_000, keys) - 1],
    );
  await db.query('VACUUM ANALYZE hookrun.flow_keys');
}

/**
 * The flow claim after `keys` distinct keys have come and gone, against the
 * same claim on a fresh database: drains of a keyed handler (every event a
 * new key) taken in turn, the first beside the engine's sweep of the gone
 * keys. Per-key state is bounded when no row is left at the end and the
 * claim's rate does not depend on how many keys were ever seen.
 */
export async function runKeysGone(
  baseUrl: string,
  sizes: { events: number; keys: number; rounds: number },
  progress: (line: string) => void,
): Promise<KeysGoneFigures> {
  const created = [await createDatabase(baseUrl, 'keysfresh'), await createDatabase(baseUrl, 'keysgone')];
  const opened: Database[] = [];
  try {
    for (const database of created) opened.push(await openDatabase({ databaseUrl: database.url, queryTimeoutMs: 600_000 }));
    for (const db of opened) await db.migrate();
    const started = performance.now();
    await fillGoneKeys(opened[1]!, sizes.keys);
    const fillMs = performance.now() - started;
    progress(`flow keys: ${sizes.keys.toLocaleString('en-US')} gone keys written in ${(fillMs / 1000).toFixed(1)} s`);
    const inboxes: Inbox[] = ['fresh', 'after keys'].map((label, i) => ({
      label,
      handler: KEYED,
      db: opened[i]!,
      handlers: keyed(),
      perSecond: [],
      hookrunUs: [],
      postgresUs: [],
      claims: [],
      flowClaims: [],
    }));
    for (let round = 1; round <= sizes.rounds; round++)
      for (const inbox of inboxes) {
        const perSecond = await drain(inbox, sizes.events, `keys-r${round}`, true);
        progress(`flow keys round ${round}/${sizes.rounds} ${inbox.label}: ${sizes.events} events drained, ${perSecond.toFixed(0)}/s`);
      }
    const [left] = await opened[1]!.query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.flow_keys WHERE flow_key LIKE 'gone-%'`);
    return {
      keys: sizes.keys,
      fillMs,
      empty: figures(inboxes[0]!),
      afterKeys: figures(inboxes[1]!),
      pairRatio: spread(inboxes[1]!.perSecond.map((rate, i) => rate / inboxes[0]!.perSecond[i]!)),
      rowsLeft: Number(left!.n),
    };
  } finally {
    for (const db of opened) await db.close();
    for (const database of created) await database.drop();
  }
}
