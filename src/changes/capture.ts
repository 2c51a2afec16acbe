import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { backoffMs } from '../backoff.js';
import type { ChangesSettings } from '../config/config.js';
import { storeChanges } from '../db/change-writer.js';
import type { Database } from '../db/database.js';
import { ConfigError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { ReplicationSession } from './replication-session.js';
import { prepareSource, readSlotStatus, rowKeyColumns, SLOT_IN_USE, sqlState, type SourceInfo } from './source-database.js';
import { parseLsn } from './wal-text.js';

/** What `/ready` and `hookrun changes status` say about the capture on this instance. */
export interface CaptureStatus {
  /** consuming: this instance streams the slot; standby: another one does; disconnected: retrying. */
  state: 'starting' | 'consuming' | 'standby' | 'disconnected' | 'stopped';
  slot: string;
  publication: string;
  /** WAL written since the slot's confirmed position (any instance can read it). */
  lagBytes: number | null;
  /** From the commit of the newest change stored to its storing (0 before the first); only the consuming instance knows it. */
  lagSeconds: number | null;
  retainedWalBytes: number | null;
  /** New inbox rows per second over the last status interval, on this instance. */
  changesPerSecond: number;
  /** The last failure's message: may name the product database's host or role, so logs and the admin API only. */
  lastError?: string;
  /** The last failure as a stable code, safe for the unauthenticated `/ready`. */
  lastErrorCode?: CaptureErrorCode;
}

/** Why the capture last failed, without its detail. */
export type CaptureErrorCode = 'source_misconfigured' | 'source_auth_failed' | 'source_unreachable' | 'source_error' | 'capture_failed';

function errorCode(error: unknown): CaptureErrorCode {
  if (error instanceof ConfigError) return 'source_misconfigured';
  const code = sqlState(error);
  if (code === undefined) return 'capture_failed';
  if (code.startsWith('28')) return 'source_auth_failed';
  return /^E[A-Z]+$/.test(code) ? 'source_unreachable' : 'source_error'; // ECONNREFUSED, ENOTFOUND, … or an SQLSTATE
}

/** The capture of the product database's changes that a running hookrun owns. */
export interface ChangeCapture {
  /** Check the source once before serving: a ConfigError (wal_level, privilege, publication) stops start-up. */
  preflight(): Promise<void>;
  start(): void;
  stop(): Promise<void>;
  status(): CaptureStatus;
  /** Read the slot's lag and retained WAL now (the capture does it every STATUS_INTERVAL_MS). */
  refresh(): Promise<void>;
}

/** What the capture needs of a running hookrun. */
export interface ChangeCaptureDeps {
  settings: ChangesSettings;
  db: Database;
  log: Logger;
  metrics: Metrics;
  /** New events are in the inbox: wake the worker. */
  onStored(): void;
  /** The slot holds back more WAL than CHANGES_MAX_RETAINED_WAL_MB. */
  onWalRetained?(line: string): void;
}

/** How often a standby asks whether the slot is free: the takeover time after an instance dies. */
export const STANDBY_POLL_MS = 2000;
const STATUS_INTERVAL_MS = 5000;
const RECONNECT_BACKOFF = { baseMs: 1000, maxMs: 30_000 };

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Change data capture from the product's PostgreSQL: one instance streams
 * the slot (PostgreSQL lets one connection at a time), the others stand by
 * and take over within STANDBY_POLL_MS of its connection closing. Each
 * committed row change becomes one inbox event; the slot's position moves
 * only after the inbox commit, so nothing is lost and nothing doubles.
 */
export function createChangeCapture(deps: ChangeCaptureDeps): ChangeCapture {
  const { settings, log, metrics } = deps;
  const pool = new pg.Pool({ connectionString: settings.databaseUrl, max: 1 });
  pool.on('error', (error) => log.warn({ err: { message: error.message } }, 'changes database: idle connection lost'));
  const stopper = new AbortController();
  let state: CaptureStatus['state'] = 'starting';
  let lastError: string | undefined;
  let lastErrorCode: CaptureErrorCode | undefined;
  let prepared: SourceInfo | undefined;
  let systemId: string | undefined;
  let session: ReplicationSession | undefined;
  let loop: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let slot: { lagBytes: number; retainedWalBytes: number; active: boolean } | undefined;
  let storedTotal = 0;
  let rate = { at: Date.now(), total: 0, perSecond: 0 };
  let walWarned = false;

  const pause = (ms: number) => sleep(ms, undefined, { signal: stopper.signal }).catch(() => undefined);
  const setState = (next: CaptureStatus['state']) => {
    state = next;
    metrics.changesConnected.set(next === 'consuming' ? 1 : 0);
  };

  const store = async (changes: Parameters<typeof storeChanges>[1]) => {
    const stored = await storeChanges(deps.db, changes);
    storedTotal += stored;
    metrics.changesCaptured.inc(stored);
    if (stored > 0) deps.onStored();
    return stored;
  };

  async function streamOnce(): Promise<void> {
    const source = prepared ?? (await prepareSource(settings, systemId));
    prepared = undefined;
    systemId = source.systemId;
    session = new ReplicationSession(
      settings.databaseUrl,
      {
        systemId: source.systemId,
        store,
        keyColumns: (relation) => rowKeyColumns(pool, relation),
        onTruncate: (tables) => log.warn({ tables }, 'TRUNCATE is not captured as events (it has no rows): reconcile the tables it emptied'),
      },
      parseLsn(source.confirmedFlushLsn),
    );
    await session.run(settings.slot, settings.publication, {
      onStreaming: () => {
        if (state !== 'consuming') log.info({ slot: settings.slot, from: source.confirmedFlushLsn }, 'capturing database changes');
        setState('consuming');
        lastError = undefined;
        lastErrorCode = undefined;
      },
    });
    if (!stopper.signal.aborted) throw new Error('the replication connection closed');
  }

  async function run(): Promise<void> {
    let failures = 0;
    while (!stopper.signal.aborted) {
      try {
        await streamOnce();
      } catch (error) {
        session = undefined;
        if (stopper.signal.aborted) break;
        if (sqlState(error) === SLOT_IN_USE) {
          if (state !== 'standby') log.info({ slot: settings.slot }, 'another instance streams the changes slot; standing by');
          setState('standby');
          failures = 0;
          await pause(STANDBY_POLL_MS);
          continue;
        }
        failures = state === 'consuming' ? 1 : failures + 1;
        setState('disconnected');
        lastError = message(error);
        lastErrorCode = errorCode(error);
        const level = error instanceof ConfigError ? 'error' : 'warn';
        log[level]({ err: { message: lastError } }, 'change capture stopped; reconnecting');
        await pause(backoffMs(failures, RECONNECT_BACKOFF));
      }
    }
    setState('stopped');
  }

  async function refresh(): Promise<void> {
    try {
      const status = await readSlotStatus(pool, settings.slot);
      slot = status && { lagBytes: status.lagBytes, retainedWalBytes: status.retainedWalBytes, active: status.active };
      if (status) {
        metrics.changesLagBytes.set(status.lagBytes);
        metrics.changesRetainedWal.set(status.retainedWalBytes);
      }
    } catch (error) {
      slot = undefined;
      log.debug({ err: { message: message(error) } }, 'changes database: slot status not read');
    }
    const now = Date.now();
    rate = { at: now, total: storedTotal, perSecond: now > rate.at ? ((storedTotal - rate.total) * 1000) / (now - rate.at) : 0 };
    const seconds = lagSeconds();
    if (seconds !== null) metrics.changesLagSeconds.set(seconds);
    warnOnRetainedWal();
  }

  function lagSeconds(): number | null {
    return state === 'consuming' ? (session?.buffer.lastStoreDelaySeconds ?? 0) : null;
  }

  // The instance that streams warns; when none does (all stuck), every one of them does.
  function warnOnRetainedWal(): void {
    if (!slot) return;
    const over = slot.retainedWalBytes > settings.maxRetainedWalBytes;
    if (over && !walWarned && (state === 'consuming' || !slot.active)) {
      const line = `slot ${settings.slot} holds ${Math.round(slot.retainedWalBytes / 1048576)} MB of WAL (CHANGES_MAX_RETAINED_WAL_MB ${Math.round(settings.maxRetainedWalBytes / 1048576)}): is hookrun capturing? If hookrun no longer runs against this database, run hookrun changes drop-slot.`;
      log.warn({ slot: settings.slot, retainedWalBytes: slot.retainedWalBytes }, line);
      deps.onWalRetained?.(line);
    }
    walWarned = over;
  }

  return {
    async preflight() {
      try {
        prepared = await prepareSource(settings);
      } catch (error) {
        if (error instanceof ConfigError) throw error;
        lastError = message(error);
        lastErrorCode = errorCode(error);
        log.warn({ err: { message: lastError } }, 'changes database not reachable at start-up; capture keeps trying');
      }
    },
    start() {
      loop ??= run();
      timer ??= setInterval(() => void refresh(), STATUS_INTERVAL_MS).unref();
    },
    async stop() {
      stopper.abort();
      clearInterval(timer);
      await session?.stop();
      await loop;
      await pool.end().catch(() => undefined);
    },
    status: () => ({
      state,
      slot: settings.slot,
      publication: settings.publication,
      lagBytes: slot?.lagBytes ?? null,
      lagSeconds: lagSeconds(),
      retainedWalBytes: slot?.retainedWalBytes ?? null,
      changesPerSecond: Math.round(rate.perSecond * 10) / 10,
      ...(lastError ? { lastError, lastErrorCode } : {}),
    }),
    refresh,
  };
}
