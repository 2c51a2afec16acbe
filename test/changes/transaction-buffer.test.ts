import type { Pgoutput } from 'pg-logical-replication';
import { describe, expect, it } from 'vitest';
import { MAX_BUFFERED_CHANGES, TransactionBuffer } from '../../src/changes/transaction-buffer.js';
import { formatLsn, parseLsn, valueParserFor } from '../../src/changes/wal-text.js';
import type { CapturedChange } from '../../src/db/change-writer.js';

const relation = {
  tag: 'relation',
  relationOid: 42,
  schema: 'public',
  name: 'items',
  replicaIdentity: 'default',
  columns: [{ name: 'id', flags: 1, typeOid: 23, typeMod: -1, typeSchema: null, typeName: null, parser: Number }],
  keyColumns: ['id'],
} as Pgoutput.MessageRelation;

const begin = (lsn: string): Pgoutput.Message => ({ tag: 'begin', commitLsn: lsn, commitTime: 1_795_000_000_000_000n, xid: 1 });
const commit = (lsn: string, end: string): Pgoutput.Message => ({
  tag: 'commit',
  flags: 0,
  commitLsn: lsn,
  commitEndLsn: end,
  commitTime: 1_795_000_000_000_000n,
});
const insert = (id: number): Pgoutput.Message => ({ tag: 'insert', relation, new: { id } });

function recorder(options: { failStore?: boolean } = {}) {
  const log: string[] = [];
  const stored: CapturedChange[][] = [];
  const buffer = new TransactionBuffer(
    {
      systemId: '7',
      store: async (changes) => {
        log.push(`store ${changes.length}`);
        if (options.failStore) throw new Error('inbox down');
        stored.push(changes);
        return changes.length;
      },
      confirm: (lsn) => log.push(`confirm ${formatLsn(lsn)}`),
      keyColumns: async (r) => r.keyColumns,
      onTruncate: () => undefined,
    },
    parseLsn('0/100'),
  );
  return { buffer, log, stored };
}

describe('WAL text', () => {
  it('reads and prints LSNs as PostgreSQL does', () => {
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n);
    expect(formatLsn(parseLsn('00000000/016B3748'))).toBe('0/16B3748');
    expect(() => parseLsn('nope')).toThrow(/not an LSN/);
  });

  it('turns column text into the JSON a Supabase webhook carries, keeping exactness', () => {
    const int8 = valueParserFor(20);
    expect(int8('42')).toBe(42);
    expect(int8('9007199254740993')).toBe('9007199254740993'); // past 2^53: text, not a silently different number
    expect(valueParserFor(1700)('12.50')).toBe(12.5);
    expect(valueParserFor(1700)('3.14159265358979323846')).toBe('3.14159265358979323846');
    expect(valueParserFor(701)('0.30000000000000004')).toBe(0.30000000000000004);
    expect(valueParserFor(701)('NaN')).toBe('NaN');
    expect(valueParserFor(16)('t')).toBe(true);
    expect(valueParserFor(3802)('{"a": [1]}')).toEqual({ a: [1] });
    expect(valueParserFor(1184)('2026-05-01 12:00:00.5+05:30')).toBe('2026-05-01T12:00:00.5+05:30');
    expect(valueParserFor(1184)('2026-05-01 12:00:00+00')).toBe('2026-05-01T12:00:00+00:00');
    expect(valueParserFor(1184)('infinity')).toBe('infinity');
    expect(valueParserFor(1114)('2026-05-01 12:00:00')).toBe('2026-05-01T12:00:00');
    expect(valueParserFor(2950)('7d444840-9dc0-11d1-b245-5ffdce74fad2')).toBe('7d444840-9dc0-11d1-b245-5ffdce74fad2');
  });
});

describe('TransactionBuffer', () => {
  it('confirms a transaction only after its changes are stored, and groups transactions into one write', async () => {
    const { buffer, log, stored } = recorder();
    for (const m of [relation, begin('0/200'), insert(1), insert(2), commit('0/200', '0/250'), begin('0/300'), insert(1), commit('0/300', '0/350')])
      await buffer.onMessage(m);
    expect(log).toEqual([]); // nothing written, nothing confirmed until the stream pauses
    await buffer.flush();
    expect(log).toEqual(['store 3', 'confirm 0/350']);
    expect(stored[0]!.map((c) => [c.key, c.orderKey])).toEqual([
      ['wal:7:0/200:0', 'public.items:[1]'],
      ['wal:7:0/200:1', 'public.items:[2]'],
      ['wal:7:0/300:0', 'public.items:[1]'],
    ]);
  });

  it('confirms nothing when the write fails', async () => {
    const { buffer, log } = recorder({ failStore: true });
    for (const m of [relation, begin('0/200'), insert(1), commit('0/200', '0/250')]) await buffer.onMessage(m);
    await expect(buffer.flush()).rejects.toThrow('inbox down');
    expect(log).toEqual(['store 1']);
  });

  it('writes a huge transaction in parts but confirms it only at its commit', async () => {
    const { buffer, log } = recorder();
    await buffer.onMessage(relation);
    await buffer.onMessage(begin('0/200'));
    for (let i = 0; i < MAX_BUFFERED_CHANGES + 10; i++) await buffer.onMessage(insert(i));
    expect(log).toEqual([`store ${MAX_BUFFERED_CHANGES}`]);
    await buffer.onMessage(commit('0/200', '0/900'));
    await buffer.flush();
    expect(log).toEqual([`store ${MAX_BUFFERED_CHANGES}`, 'store 10', 'confirm 0/900']);
  });

  it('confirms a keepalive position only when it holds nothing, and never moves back', async () => {
    const { buffer, log } = recorder();
    await buffer.onMessage(relation);
    await buffer.onMessage(begin('0/200'));
    buffer.onKeepalive('0/280'); // a transaction is open: its changes are not stored yet
    await buffer.onMessage(insert(1));
    await buffer.onMessage(commit('0/200', '0/250'));
    buffer.onKeepalive('0/280'); // completed but not written yet
    expect(log).toEqual([]);
    await buffer.flush();
    buffer.onKeepalive('0/280');
    buffer.onKeepalive('0/260');
    expect(log).toEqual(['store 1', 'confirm 0/250', 'confirm 0/280']);
  });
});
