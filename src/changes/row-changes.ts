import { createHash } from 'node:crypto';
import type { Pgoutput } from 'pg-logical-replication';
import type { CapturedChange } from '../db/change-writer.js';

/** One row message of pgoutput, as pg-logical-replication parses it. */
export type RowMessage = Pgoutput.MessageInsert | Pgoutput.MessageUpdate | Pgoutput.MessageDelete;

/** The transaction a row change belongs to, from its `begin` message. */
export interface CommitInfo {
  /** The source cluster's system identifier: an LSN is unique only within one cluster. */
  systemId: string;
  commitLsn: string;
  commitTime: string;
}

/** Longer order keys are hashed: the inbox's order index takes rows of at most ~2.7 KB. */
const MAX_READABLE_ORDER_KEY = 200;

const TYPES = { insert: 'INSERT', update: 'UPDATE', delete: 'DELETE' } as const;

type Row = Record<string, unknown>;

function orderKey(message: RowMessage, row: Row | null, keyColumns: readonly string[] | undefined): string {
  const table = `${message.relation.schema}.${message.relation.name}`;
  // No key known (a table without primary key and replica identity): all its changes share one order.
  const values = keyColumns && row ? JSON.stringify(keyColumns.map((column) => row[column] ?? null)) : '*';
  const key = `${table}:${values}`;
  return key.length <= MAX_READABLE_ORDER_KEY ? key : `${table}:sha256:${createHash('sha256').update(values).digest('hex')}`;
}

/**
 * One committed row change as an inbox event: the shape of a Supabase
 * Database Webhook (`{type, table, schema, record, old_record}`) plus
 * `commit_lsn` and `commit_time`, so one handler serves both paths. The key
 * (`wal:<system>:<commit LSN>:<position>`) is the same on every read of the
 * WAL, so a transaction read twice is stored once. An UPDATE that left large
 * (TOASTed) columns unchanged carries them in neither record: their names are
 * listed in `unchanged_toast`.
 */
export function toCapturedChange(message: RowMessage, commit: CommitInfo, position: number, keyColumns: readonly string[] | undefined): CapturedChange {
  const record: Row | null = message.tag === 'delete' ? null : message.new;
  const oldRecord: Row | null = message.tag === 'insert' ? null : (message.old ?? message.key);
  const payload: Record<string, unknown> = {
    type: TYPES[message.tag],
    table: message.relation.name,
    schema: message.relation.schema,
    record,
    old_record: oldRecord,
    commit_lsn: commit.commitLsn,
    commit_time: commit.commitTime,
  };
  if (message.tag === 'update') {
    const unchanged = message.relation.columns.filter((c) => message.new[c.name] === undefined).map((c) => c.name);
    if (unchanged.length > 0) payload.unchanged_toast = unchanged;
  }
  return {
    key: `wal:${commit.systemId}:${commit.commitLsn}:${position}`,
    type: TYPES[message.tag],
    payloadJson: JSON.stringify(payload),
    orderKey: orderKey(message, record ?? oldRecord, keyColumns),
  };
}
