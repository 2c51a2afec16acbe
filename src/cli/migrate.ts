import type { Command } from 'commander';
import { openDatabase } from '../db/client.js';
import { applyProjectMigrations } from '../project/migrations.js';
import { cliDatabaseOptions, embeddedHolderPid } from './local-database.js';
import { EXIT_CODES, say, warn } from './output.js';
import { setExitCode, loadCliConfig } from './io.js';

/** `hookrun migrate`: apply the committed migrations (start does it too; this is for deploy pipelines). */
export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description("apply hookrun's migrations, then the project's migrations/*.sql, and exit (hookrun start also applies them)")
    .addHelpText('after', '\nExit codes: 0 migrated, 1 failed (or the embedded DATA_DIR is in use), 78 config.')
    .action(async () => {
      const config = loadCliConfig();
      const holder = embeddedHolderPid(config);
      if (holder !== undefined) {
        warn(
          `hookrun: hookrun is running on DATA_DIR ${config.dataDir} (pid ${holder}) and applied the migrations it ships when it started. ` +
            'To apply newer ones, stop it and run `hookrun migrate` again (or just start the new version).\n',
        );
        setExitCode(EXIT_CODES.failure);
        return;
      }
      const db = await openDatabase(cliDatabaseOptions(config, 1));
      try {
        const report = await db.migrate();
        const own = await applyProjectMigrations(db, config.projectDir);
        for (const name of own) say(`applied migrations/${name}\n`);
        if (report.movedFromPublic.length > 0) say(`moved ${report.movedFromPublic.length} tables from public to schema ${config.schema}\n`);
        say(`migrated (${db.kind === 'pglite' ? `embedded database in ${config.dataDir}` : 'PostgreSQL at DATABASE_URL'})\n`);
      } finally {
        await db.close();
      }
    });
}
