#!/usr/bin/env node
import { createRequire } from 'node:module';
import { Command, CommanderError } from 'commander';
import { EXIT_CODES } from './cli/output.js';
import { useProjectDir } from './config/config.js';
import { ConfigError } from './errors.js';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

const program = new Command()
  .name('hookrun')
  .description('Verified, durable, exactly-once webhooks and scheduled jobs.')
  .version(version, '-v, --version', 'print the hookrun version')
  .option('--project <dir>', 'the project folder: its jobs/, handlers/, platform.json and .env (default: the working directory)')
  .showHelpAfterError('(hookrun <command> --help shows how to use it)')
  .exitOverride();

/**
 * Each command group's module, in `--help` order, with the command names it
 * registers. Only the group of the command being run is imported: the others
 * bring the whole app (admin client, HTTP, handlers), and `start` opens its
 * database before it loads those (service.ts), so PGlite boots beside them.
 */
const COMMAND_GROUPS: ReadonlyArray<readonly [names: readonly string[], load: () => Promise<(program: Command) => void>]> = [
  [['start', 'worker'], async () => (await import('./cli/start.js')).registerStartCommands],
  [['init'], async () => (await import('./cli/init.js')).registerInitCommand],
  [['dev'], async () => (await import('./cli/dev.js')).registerDevCommand],
  [['migrate'], async () => (await import('./cli/migrate.js')).registerMigrateCommand],
  [['check'], async () => (await import('./cli/check.js')).registerCheckCommand],
  [['send'], async () => (await import('./cli/send.js')).registerSendCommand],
  [['cron'], async () => (await import('./cli/cron.js')).registerCronCommands],
  [['events'], async () => (await import('./cli/events.js')).registerEventsCommands],
  [['handlers'], async () => (await import('./cli/handlers.js')).registerHandlersCommands],
  [['issues'], async () => (await import('./cli/issues.js')).registerIssuesCommands],
  [['reconcile'], async () => (await import('./cli/reconcile.js')).registerReconcileCommand],
  [['prune'], async () => (await import('./cli/prune.js')).registerPruneCommand],
  [['alert'], async () => (await import('./cli/alert.js')).registerAlertCommand],
  [['mirror'], async () => (await import('./cli/mirror.js')).registerMirrorCommand],
  [['listen'], async () => (await import('./cli/listen.js')).registerListenCommand],
  [['changes'], async () => (await import('./cli/changes.js')).registerChangesCommands],
  [['vercel'], async () => (await import('./cli/vercel.js')).registerVercelCommand],
];

/** The groups to register: the one naming `argv[2]`, or all of them (help, `--version`, a mistyped command). */
function groupsFor(command: string | undefined) {
  const named = COMMAND_GROUPS.filter(([names]) => command !== undefined && names.includes(command));
  return named.length > 0 ? named : COMMAND_GROUPS;
}

/**
 * `--project <dir>` (any command): the project whose jobs/, handlers/,
 * platform.json and .env to use, as HOOKRUN_PROJECT (which child processes
 * such as `dev`'s inherit). Taken out of argv before commander parses it.
 */
function takeProjectOption(argv: string[]): string | undefined {
  const at = argv.findIndex((arg, i) => i >= 2 && (arg === '--project' || arg.startsWith('--project=')));
  if (at < 0) return undefined;
  const value = argv[at]!.includes('=') ? argv[at]!.slice('--project='.length) : argv[at + 1];
  if (!value) throw new ConfigError('--project needs a folder: hookrun start --project ./my-hookrun');
  argv.splice(at, argv[at]!.includes('=') ? 1 : 2);
  return value;
}

try {
  useProjectDir(takeProjectOption(process.argv));
  for (const register of await Promise.all(groupsFor(process.argv[2]).map(([, load]) => load()))) register(program);
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
