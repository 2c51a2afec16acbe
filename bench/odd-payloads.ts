import type { Database } from '../src/db/database.js';
import { EventWriter } from '../src/db/event-writer.js';
import { listEvents } from '../src/db/events.js';
import { parsePayloadMatch } from '../src/db/event-filter.js';

/** One kind of payload stored through the real writer: its size, the time per event, and whether its id is found by search. */
export interface OddPayloadFigures {
  kind: string;
  bytes: number;
  /** Mean over the stored events, one at a time (no group commit to share). */
  msPerEvent: number;
  /** The same per MiB of payload, against the normal event's. */
  msPerMiB: number;
  searchKeys: number;
  foundById: boolean;
}

const ID = 'cus_Odd0Payload01';

/** The payloads the bench stores: a normal ~1.5 KB event and the hostile shapes, each carrying the same customer id. */
function payloads(): Array<{ kind: string; json: (n: number) => string }> {
  const normal = (n: number) =>
    JSON.stringify({
      id: `evt_odd${n}`,
      type: 'invoice.paid',
      data: {
        object: {
          id: `in_Odd${String(n).padStart(10, '0')}`,
          customer: ID,
          lines: Array.from({ length: 12 }, (_, i) => ({ amount: i * 100, description: 'Pro plan, monthly' })),
        },
      },
    });
  const manyKeys = (n: number) => {
    const object: Record<string, unknown> = { customer: ID };
    for (let i = 0; i < 100_000; i++) object[`k${i}`] = i;
    return JSON.stringify({ id: `evt_keys${n}`, data: { object } });
  };
  const bigString = (n: number) => JSON.stringify({ id: `evt_big${n}`, data: { object: { customer: ID, note: 'x'.repeat(1024 * 1024) } } });
  const deep = (n: number) => {
    let nested: unknown = [ID];
    for (let i = 0; i < 60; i++) nested = [nested, i];
    return JSON.stringify({ id: `evt_deep${n}`, data: { object: { customer: ID, nested } } });
  };
  const manyIds = (n: number) =>
    JSON.stringify({
      id: `evt_ids${n}`,
      data: { object: { customer: ID, refs: Array.from({ length: 10_000 }, (_, i) => `ch_Ref${String(i).padStart(10, '0')}`) } },
    });
  return [
    { kind: 'normal invoice', json: normal },
    { kind: '100,000 keys', json: manyKeys },
    { kind: '1 MiB string', json: bigString },
    { kind: 'arrays nested 60 deep', json: deep },
    { kind: '10,000 ids', json: manyIds },
  ];
}

/**
 * Hostile payload shapes against a normal one on a fresh inbox: each stored
 * `count` times one at a time through the writer, its time per event and per
 * MiB, the search keys it got (bounded), and whether the equals search for
 * its customer id finds it.
 */
export async function measureOddPayloads(db: Database, count: number): Promise<OddPayloadFigures[]> {
  const writer = new EventWriter(db);
  const figures: OddPayloadFigures[] = [];
  for (const [k, { kind, json }] of payloads().entries()) {
    const bodies = Array.from({ length: count }, (_, n) => json(k * 1000 + n));
    const started = performance.now();
    for (const [n, payloadJson] of bodies.entries()) await writer.write({ source: 'oddbench', key: `${k}-${n}`, type: kind, payloadJson });
    const msPerEvent = (performance.now() - started) / count;
    const bytes = Buffer.byteLength(bodies[0]!);
    const [keys] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM hookrun.event_search s JOIN hookrun.webhook_events e ON e.id = s.event_id WHERE e.source = 'oddbench' AND e.key = $1`,
      [`${k}-0`],
    );
    const page = await listEvents(db, { source: 'oddbench', type: kind, where: parsePayloadMatch(`data.object.customer = ${ID}`), limit: count });
    figures.push({ kind, bytes, msPerEvent, msPerMiB: msPerEvent / (bytes / 2 ** 20), searchKeys: Number(keys!.n), foundById: page.events.length === count });
  }
  return figures;
}
