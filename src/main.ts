#!/usr/bin/env node
import { createRequire } from 'node:module';
import { Command, CommanderError } from 'commander';
import { registerAlertCommand } from './cli/alert.js';
import { registerDevCommand } from './cli/dev.js';
import { registerStartCommands } from './cli/start.js';
import { registerChangesCommands } from './cli/changes.js';
import { registerCheckCommand } from './cli/check.js';
import { registerCronCommands } from './cli/cron.js';
import { registerEventsCommands } from './cli/events.js';
import { EXIT_CODES } from './cli/output.js';
import { registerListenCommand } from './cli/listen.js';
import { registerMigrateCommand } from './cli/migrate.js';
import { registerMirrorCommand } from './cli/mirror.js';
import { registerPruneCommand } from './cli/prune.js';
import { registerReconcileCommand } from './cli/reconcile.js';
import { registerSendCommand } from './cli/send.js';
import { loadDotEnvFile } from './config.js';
import { ConfigError } from './errors.js';


const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

const program = new Command()
  .name('hookrun')
  .description('Verified, durable, exactly-once webhooks and scheduled jobs.')
  .version(version, '-v, --version', 'print the hookrun version')
  .showHelpAfterError('(hookrun <command> --help shows how to use it)')
  .exitOverride();

registerStartCommands(program);
registerDevCommand(program);
registerMigrateCommand(program);
registerCheckCommand(program);
registerSendCommand(program);
registerCronCommands(program);
registerEventsCommands(program);
registerReconcileCommand(program);
registerPruneCommand(program);
registerAlertCommand(program);
registerMirrorCommand(program);
registerListenCommand(program);
registerChangesCommands(program);

try {
  loadDotEnvFile();
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage);
  if (error instanceof ConfigError) {
    process.stderr.write(`hookrun: ${error.message}\n`);
    process.exit(EXIT_CODES.config);
  }
  process.stderr.write(`hookrun: ${(error as Error).message}\n`);
  process.exit(EXIT_CODES.failure);
}
