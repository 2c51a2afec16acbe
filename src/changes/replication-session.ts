import { LogicalReplicationService, PgoutputPlugin, type Pgoutput } from 'pg-logical-replication';

type Message = Pgoutput.Message;
import { TransactionBuffer, type BufferDeps } from './transaction-buffer.js';
import { formatLsn, valueParserFor } from './wal-text.js';

/** Messages read ahead of the inbox writes before the socket is paused (TCP then holds the rest). */
const HIGH_WATER = 2000;

/** pgoutput with each column parsed into the JSON value a Supabase webhook would carry (wal-text.ts), not pg's JS types. */
class JsonValuePgoutputPlugin extends PgoutputPlugin {
  override parse(buffer: Buffer): Message {
    const message = super.parse(buffer);
    // The parser keeps this relation object and reads each column's `parser` for every later row of it.
    if (message.tag === 'relation') for (const column of message.columns) column.parser = valueParserFor(column.typeOid);
    return message;
  }
}

type Item = { message: Message } | { keepalive: string };

/** What one session reports to the capture loop. */
export interface SessionEvents {
  onStreaming(): void;
}

/**
 * One replication connection: START_REPLICATION on the slot, every message
 * through the TransactionBuffer in arrival order, and standby status updates
 * that never run ahead of the inbox. Resolves when the connection ends,
 * rejects on the first error (the caller reconnects from the slot's position).
 */
export class ReplicationSession {
  private readonly service: LogicalReplicationService;
  readonly buffer: TransactionBuffer;
  private readonly queue: Item[] = [];
  private draining: Promise<void> | undefined;
  private paused = false;
  private fail: (error: unknown) => void = () => undefined;

  constructor(
    private readonly connectionString: string,
    bufferDeps: Omit<BufferDeps, 'confirm'>,
    confirmedAtStart: bigint,
  ) {
    // No automatic acknowledgements: the library would confirm what it received, not what the inbox holds.
    this.service = new LogicalReplicationService({ connectionString }, { acknowledge: { auto: false, timeoutSeconds: 0 }, flowControl: { enabled: false } });
    this.buffer = new TransactionBuffer({ ...bufferDeps, confirm: (lsn) => this.sendPosition(lsn) }, confirmedAtStart);
  }

  /** Stream until the connection ends or something fails. */
  run(slot: string, publication: string, events: SessionEvents): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.fail = (error) => {
        reject(error);
        void this.service.stop();
      };
      this.service.on('start', () => events.onStreaming());
      this.service.on('error', (error: Error) => this.fail(error));
      this.service.on('data', (_lsn: string, message: Message) => this.enqueue({ message }));
      this.service.on('heartbeat', (lsn: string, _timestamp: number, shouldRespond: boolean) => {
        if (shouldRespond) this.sendPosition(this.buffer.confirmed); // a reply, never a step forward
        this.enqueue({ keepalive: lsn });
      });
      this.service.subscribe(new JsonValuePgoutputPlugin({ protoVersion: 1, publicationNames: [publication] }), slot).then(() => resolve(), reject);
    });
  }

  /** Close the connection and let a write in flight finish; what was stored but not confirmed is read again (and deduped) next time. */
  async stop(): Promise<void> {
    this.queue.length = 0;
    await this.service.stop();
    await this.draining;
  }

  private enqueue(item: Item): void {
    this.queue.push(item);
    if (!this.paused && this.queue.length >= HIGH_WATER) this.setPaused(true);
    this.draining ??= this.drain().finally(() => (this.draining = undefined));
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        while (this.queue.length > 0) {
          const item = this.queue.shift()!;
          if ('message' in item) await this.buffer.onMessage(item.message);
          else this.buffer.onKeepalive(item.keepalive);
        }
        await this.buffer.flush(); // the stream paused: write the completed transactions together
        if (this.paused && this.queue.length < HIGH_WATER / 2) this.setPaused(false);
      }
    } catch (error) {
      this.queue.length = 0;
      this.fail(error);
    }
  }

  // The library's own flow control pauses this same socket; it keeps it private, so reach it defensively.
  private setPaused(paused: boolean): void {
    const stream = (this.service as unknown as { _connection?: { stream?: { pause?(): void; resume?(): void } } })._connection?.stream;
    if (paused) stream?.pause?.();
    else stream?.resume?.();
    this.paused = paused;
  }

  // The library reports `lsn + 1` as flushed (the "last byte + 1" of a physical standby). A commit's end
  // LSN is already the first byte after it, and the next commit may start exactly there: send one less,
  // so PostgreSQL's confirmed position is the end LSN itself and never skips that next transaction.
  private sendPosition(lsn: bigint): void {
    if (lsn <= 0n) return;
    void this.service.acknowledge(formatLsn(lsn - 1n));
  }
}
