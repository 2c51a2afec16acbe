import type { Pgoutput } from 'pg-logical-replication';
import type { CapturedChange } from '../db/change-writer.js';
import { toCapturedChange, type CommitInfo } from './row-changes.js';
import { formatLsn, parseLsn } from './wal-text.js';

/** What the buffer needs from its surroundings; all of it is awaited in message order. */
export interface BufferDeps {
  systemId: string;
  /** Commit the changes to the inbox; resolves with how many were new. */
  store(changes: CapturedChange[]): Promise<number>;
  /** Tell the product's database that everything before `lsn` is safe (the slot may forget it). */
  confirm(lsn: bigint): void;
  /** The columns that identify a row of this table, or undefined when it has none. */
  keyColumns(relation: Pgoutput.MessageRelation): Promise<string[] | undefined>;
  onTruncate(tables: string[]): void;
}

/** Changes held before they are written even inside one open transaction: bounds memory on a bulk write. */
export const MAX_BUFFERED_CHANGES = 1000;

function microsToIso(micros: bigint): string {
  const iso = new Date(Number(micros / 1000n)).toISOString();
  return iso.replace('Z', `${String(micros % 1000n).padStart(3, '0')}Z`);
}

const normalLsn = (text: string | null): string => {
  if (text === null) throw new Error('a pgoutput message without an LSN');
  return formatLsn(parseLsn(text));
};

/**
 * Turns the pgoutput stream of one replication connection into inbox writes
 * and confirmations, in the only safe order: a transaction's changes are
 * committed to the inbox before its end LSN is confirmed, so a crash at any
 * point re-reads (and dedupes) rather than loses. Completed transactions are
 * written together when the stream pauses (group commit); a huge one is
 * written in parts, confirmed only after its last part.
 */
export class TransactionBuffer {
  private open: { commit: CommitInfo; position: number; changes: CapturedChange[] } | undefined;
  private ready: CapturedChange[] = [];
  private readyEnd: bigint | undefined;
  private readyCommitTime: string | undefined;
  private readonly keys = new Map<number, string[] | undefined>();
  /** Highest LSN confirmed on this connection. */
  confirmed: bigint;
  /** Seconds from the commit of the newest transaction stored to its storing (replication lag as it was then). */
  lastStoreDelaySeconds: number | undefined;

  constructor(
    private readonly deps: BufferDeps,
    confirmedAtStart: bigint,
  ) {
    this.confirmed = confirmedAtStart;
  }

  /** Handle one decoded message. Row changes are queued; nothing is confirmed here but through `flush`. */
  async onMessage(message: Pgoutput.Message): Promise<void> {
    switch (message.tag) {
      case 'begin':
        this.open = {
          commit: { systemId: this.deps.systemId, commitLsn: normalLsn(message.commitLsn), commitTime: microsToIso(BigInt(message.commitTime as bigint)) },
          position: 0,
          changes: [],
        };
        return;
      case 'relation':
        this.keys.set(message.relationOid, await this.deps.keyColumns(message));
        return;
      case 'insert':
      case 'update':
      case 'delete': {
        const open = this.requireOpen();
        open.changes.push(toCapturedChange(message, open.commit, open.position++, this.keys.get(message.relation.relationOid)));
        if (open.changes.length + this.ready.length >= MAX_BUFFERED_CHANGES) await this.flush(true);
        return;
      }
      case 'commit': {
        const open = this.requireOpen();
        this.ready.push(...open.changes);
        this.readyEnd = parseLsn(normalLsn(message.commitEndLsn));
        this.readyCommitTime = open.commit.commitTime;
        this.open = undefined;
        if (this.ready.length >= MAX_BUFFERED_CHANGES / 2) await this.flush();
        return;
      }
      case 'truncate':
        this.deps.onTruncate(message.relations.map((r) => `${r.schema}.${r.name}`));
        return;
      default:
        return; // type, origin, logical messages: nothing to store
    }
  }

  /** A keepalive's WAL position: with nothing held, everything before it is done (confirming it lets the slot free WAL of other tables). */
  onKeepalive(walEnd: string): void {
    if (this.open || this.ready.length > 0) return;
    this.confirmUpTo(parseLsn(walEnd));
  }

  /** Write what is held (with `partial`, the open transaction's changes so far too), then confirm completed transactions. */
  async flush(partial = false): Promise<void> {
    const changes = partial && this.open ? [...this.ready, ...this.open.changes] : this.ready;
    if (changes.length > 0) await this.deps.store(changes);
    if (partial && this.open) this.open.changes = [];
    this.ready = [];
    if (this.readyEnd !== undefined) {
      if (this.readyCommitTime) this.lastStoreDelaySeconds = Math.max(0, (Date.now() - Date.parse(this.readyCommitTime)) / 1000);
      this.confirmUpTo(this.readyEnd);
      this.readyEnd = undefined;
    }
  }

  private confirmUpTo(lsn: bigint): void {
    if (lsn <= this.confirmed) return;
    this.confirmed = lsn;
    this.deps.confirm(lsn);
  }

  private requireOpen(): NonNullable<TransactionBuffer['open']> {
    if (!this.open) throw new Error('pgoutput sent a change outside a transaction');
    return this.open;
  }
}
