import pg from 'pg';
import type { ChangesSettings } from '../config/config.js';
import { ConfigError } from '../errors.js';

/** What start-up learns of the product's database before it streams. */
export interface SourceInfo {
  /** pg_control's system identifier (IDENTIFY_SYSTEM): part of every change's key. */
  systemId: string;
  /** Where the slot resumes: everything before it is in the inbox already. */
  confirmedFlushLsn: string;
}

/** The slot as PostgreSQL reports it, with the WAL it makes the database keep. */
export interface SlotStatus {
  slot: string;
  active: boolean;
  activePid: number | null;
  confirmedFlushLsn: string | null;
  currentLsn: string;
  /** WAL written since the slot's confirmed position: what hookrun has not taken yet. */
  lagBytes: number;
  /** WAL the database keeps for this slot (from its restart position). */
  retainedWalBytes: number;
  walStatus: string | null;
}

/** PostgreSQL's `object_in_use`: START_REPLICATION on a slot another connection streams from. */
export const SLOT_IN_USE = '55006';

/** Any node-postgres error carries its SQLSTATE here. */
export function sqlState(error: unknown): string | undefined {
  return (error as { code?: unknown })?.code && typeof (error as { code: unknown }).code === 'string' ? (error as { code: string }).code : undefined;
}

const SLOT_STATUS_SQL = `
  SELECT s.active, s.active_pid, s.confirmed_flush_lsn::text AS confirmed, pg_current_wal_lsn()::text AS current, s.wal_status,
         coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), s.confirmed_flush_lsn), 0)::bigint AS lag_bytes,
         coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), s.restart_lsn), 0)::bigint AS retained_bytes
  FROM pg_replication_slots s WHERE s.slot_name = $1`;

/** The slot's position and what it holds back; undefined when it does not exist. */
export async function readSlotStatus(db: pg.ClientBase | pg.Pool, slot: string): Promise<SlotStatus | undefined> {
  const { rows } = await db.query(SLOT_STATUS_SQL, [slot]);
  const row = rows[0];
  if (!row) return undefined;
  return {
    slot,
    active: row.active,
    activePid: row.active_pid,
    confirmedFlushLsn: row.confirmed,
    currentLsn: row.current,
    lagBytes: Number(row.lag_bytes),
    retainedWalBytes: Number(row.retained_bytes),
    walStatus: row.wal_status,
  };
}

async function requireLogicalSetup(client: pg.Client, settings: ChangesSettings): Promise<void> {
  const { rows: wal } = await client.query<{ wal_level: string }>('SHOW wal_level');
  if (wal[0]?.wal_level !== 'logical') {
    throw new ConfigError(
      `CHANGES_DATABASE_URL: wal_level is "${wal[0]?.wal_level}", not "logical". Run ALTER SYSTEM SET wal_level = logical; and restart that PostgreSQL (Supabase and Neon with logical replication enabled already have it).`,
    );
  }
  const { rows: role } = await client.query<{ name: string; ok: boolean }>(
    'SELECT current_user AS name, rolreplication OR rolsuper AS ok FROM pg_roles WHERE rolname = current_user',
  );
  if (!role[0]?.ok) {
    throw new ConfigError(
      `CHANGES_DATABASE_URL: the user "${role[0]?.name}" may not replicate. Run ALTER ROLE ${role[0]?.name} WITH REPLICATION; (or connect as a user that may).`,
    );
  }
  const { rows: publication } = await client.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [settings.publication]);
  if (publication.length === 0) {
    throw new ConfigError(
      `CHANGES_DATABASE_URL: no publication "${settings.publication}". Create it in that database: CREATE PUBLICATION ${settings.publication} FOR TABLE profiles, orders; (your tables), or set CHANGES_PUBLICATION.`,
    );
  }
}

async function ensureSlot(client: pg.Client, settings: ChangesSettings): Promise<string> {
  const find = () =>
    client.query<{ plugin: string; database: string; confirmed: string | null; here: string }>(
      'SELECT plugin, database, confirmed_flush_lsn::text AS confirmed, current_database() AS here FROM pg_replication_slots WHERE slot_name = $1',
      [settings.slot],
    );
  let { rows } = await find();
  if (rows.length === 0) {
    try {
      await client.query(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, [settings.slot]);
    } catch (error) {
      if (sqlState(error) !== '42710') throw error; // another instance created it first
    }
    ({ rows } = await find());
  }
  const slot = rows[0];
  if (!slot || slot.plugin !== 'pgoutput' || slot.database !== slot.here || !slot.confirmed) {
    throw new ConfigError(
      `CHANGES_SLOT: the slot "${settings.slot}" belongs to another database or plugin (${slot?.database}, ${slot?.plugin}). Choose another CHANGES_SLOT, or drop that slot if nothing uses it.`,
    );
  }
  return slot.confirmed;
}

async function identifySystem(settings: ChangesSettings): Promise<string> {
  const client = new pg.Client({ connectionString: settings.databaseUrl, replication: 'database' } as pg.ClientConfig);
  try {
    await client.connect();
    const { rows } = await client.query<{ systemid: string }>('IDENTIFY_SYSTEM');
    return String(rows[0]?.systemid);
  } catch (error) {
    if (sqlState(error) === '28000') {
      throw new ConfigError(
        `CHANGES_DATABASE_URL: PostgreSQL refused a replication connection (${(error as Error).message}). Allow it in pg_hba.conf ("host replication <user> <address> scram-sha-256") and reload.`,
      );
    }
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Check what logical replication needs (wal_level, the REPLICATION
 * privilege, the publication), create the slot if it is missing, and learn
 * the cluster's identity (once: a standby asks again every few seconds). A
 * ConfigError names the fix; anything else (the database is down) is for the
 * caller to retry.
 */
export async function prepareSource(settings: ChangesSettings, knownSystemId?: string): Promise<SourceInfo> {
  const client = new pg.Client({ connectionString: settings.databaseUrl });
  await client.connect();
  try {
    await requireLogicalSetup(client, settings);
    const confirmedFlushLsn = await ensureSlot(client, settings);
    return { systemId: knownSystemId ?? (await identifySystem(settings)), confirmedFlushLsn };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The columns that order a table's changes per row: the replica identity
 * when it is a key (DEFAULT, USING INDEX), else the primary key (FULL,
 * NOTHING); undefined for a table with neither (its changes keep table order).
 */
export async function rowKeyColumns(
  pool: pg.Pool,
  relation: { relationOid: number; replicaIdentity: string; keyColumns: string[] },
): Promise<string[] | undefined> {
  if ((relation.replicaIdentity === 'default' || relation.replicaIdentity === 'index') && relation.keyColumns.length > 0) return relation.keyColumns;
  const { rows } = await pool.query<{ name: string }>(
    `SELECT a.attname AS name FROM pg_index i JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n) ON true
     JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
     WHERE i.indrelid = $1 AND i.indisprimary ORDER BY k.n`,
    [relation.relationOid],
  );
  return rows.length > 0 ? rows.map((r) => r.name) : undefined;
}
