import type { Command } from 'commander';
import type pg from 'pg';
import type { SlotStatus } from '../changes/source-database.js';
import { type ChangesSettings } from '../config/config.js';
import { ConfigError } from '../errors.js';
import { printJson, say } from './output.js';
import { loadCliConfig } from './io.js';

function requireChanges(): ChangesSettings {
  const settings = loadCliConfig().changes;
  if (!settings) throw new ConfigError('CHANGES_DATABASE_URL is not set: set it to the product database (wal_level=logical) whose changes hookrun captures.');
  return settings;
}

// pg and the slot queries load only when a changes command runs: every other command starts without them.
async function withSource<T>(
  settings: ChangesSettings,
  fn: (client: pg.Client, readSlotStatus: typeof import('../changes/source-database.js').readSlotStatus) => Promise<T>,
): Promise<T> {
  const [{ default: pgModule }, { readSlotStatus }] = await Promise.all([import('pg'), import('../changes/source-database.js')]);
  const client = new pgModule.Client({ connectionString: settings.databaseUrl });
  await client.connect();
  try {
    return await fn(client, readSlotStatus);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const megabytes = (bytes: number) => (bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} kB` : `${(bytes / 1048576).toFixed(1)} MB`);

function describe(settings: ChangesSettings, slot: SlotStatus | undefined, tables: string[]): string {
  const publication = `${settings.publication}: ${tables.length > 0 ? tables.join(', ') : 'no tables (ALTER PUBLICATION … ADD TABLE …)'}`;
  if (!slot) return [`slot          ${settings.slot}: none (hookrun start creates it)`, `publication   ${publication}`].join('\n');
  return [
    `slot          ${slot.slot}`,
    `streaming     ${slot.active ? `yes (PID ${slot.activePid})` : 'no: no hookrun instance is connected, so the database keeps WAL for it'}`,
    `confirmed     ${slot.confirmedFlushLsn} (current WAL ${slot.currentLsn})`,
    `lag           ${megabytes(slot.lagBytes)} of WAL not yet in the inbox`,
    `retained WAL  ${megabytes(slot.retainedWalBytes)} (${slot.walStatus}; hookrun warns past ${megabytes(settings.maxRetainedWalBytes)}, CHANGES_MAX_RETAINED_WAL_MB)`,
    `publication   ${publication}`,
  ].join('\n');
}

/** `hookrun changes status|drop-slot`: see what the capture's slot holds back, and remove it when hookrun leaves. */
export function registerChangesCommands(program: Command): void {
  const changes = program.command('changes').description('the capture of database changes from the WAL (CHANGES_DATABASE_URL)');
  changes
    .command('status')
    .description("the slot's position, its lag and the WAL it makes the database keep")
    .option('--json', 'print JSON')
    .action(async (flags: { json?: boolean }) => {
      const settings = requireChanges();
      const { slot, tables } = await withSource(settings, async (client, readSlotStatus) => ({
        slot: await readSlotStatus(client, settings.slot),
        tables: (
          await client.query<{ name: string }>("SELECT schemaname || '.' || tablename AS name FROM pg_publication_tables WHERE pubname = $1 ORDER BY 1", [
            settings.publication,
          ])
        ).rows.map((r) => r.name),
      }));
      if (flags.json) printJson({ slot: slot ?? null, publication: settings.publication, tables });
      else say(`${describe(settings, slot, tables)}\n`);
    });
  changes
    .command('drop-slot')
    .description('drop the replication slot, so the database stops keeping WAL for hookrun (stop every hookrun first)')
    .addHelpText(
      'after',
      '\nChanges made after the slot is dropped and before hookrun creates a new one are not captured.\nExit codes: 0 dropped (or no slot), 1 in use or failed, 78 config.',
    )
    .action(async () => {
      const settings = requireChanges();
      const message = await withSource(settings, async (client, readSlotStatus) => {
        const slot = await readSlotStatus(client, settings.slot);
        if (!slot) return `no slot "${settings.slot}": nothing to drop`;
        if (slot.active) {
          throw new Error(
            `the slot "${settings.slot}" is in use by PID ${slot.activePid} (a running hookrun): stop every hookrun instance, or unset CHANGES_DATABASE_URL and restart them, then run this again`,
          );
        }
        await client.query('SELECT pg_drop_replication_slot($1)', [settings.slot]);
        return `dropped slot "${settings.slot}": the database no longer keeps WAL for hookrun. The publication "${settings.publication}" is yours: DROP PUBLICATION ${settings.publication}; when nothing else uses it.`;
      });
      say(`${message}\n`);
    });
}
