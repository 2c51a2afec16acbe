import { Command, CommanderError } from 'commander';
import { useProjectDir } from '../config/project-dir.js';
import { ConfigError } from '../errors.js';
import { withCliIo, type CliIo } from './io.js';
import { EXIT_CODES } from './output.js';
import { HOOKRUN_VERSION } from '../version.js';

/**
 * Each command group's module, in `--help` order, with the command names it
 * registers. Only the group of the command being run is imported: the others
 * bring the whole app (admin client, HTTP, handlers), and `start` opens its
 * database before it loads those (service.ts), so PGlite boots beside them.
 */
const COMMAND_GROUPS: ReadonlyArray<readonly [names: readonly string[], load: () => Promise<(program: Command) => void>]> = [
  [['start', 'worker'], async () => (await import('./start.js')).registerStartCommands],
  [['init'], async () => (await import('./init.js')).registerInitCommand],
  [['dev'], async () => (await import('./dev.js')).registerDevCommand],
  [['migrate'], async () => (await import('./migrate.js')).registerMigrateCommand],
  [['check'], async () => (await import('./check.js')).registerCheckCommand],
  [['send'], async () => (await import('./send.js')).registerSendCommand],
  [['cron'], async () => (await import('./cron.js')).registerCronCommands],
  [['events'], async () => (await import('./events.js')).registerEventsCommands],
  [['handlers'], async () => (await import('./handlers.js')).registerHandlersCommands],
  [['issues'], async () => (await import('./issues.js')).registerIssuesCommands],
  [['reconcile'], async () => (await import('./reconcile.js')).registerReconcileCommand],
  [['prune'], async () => (await import('./prune.js')).registerPruneCommand],
  [['alert'], async () => (await import('./alert.js')).registerAlertCommand],
  [['mirror'], async () => (await import('./mirror.js')).registerMirrorCommand],
  [['listen'], async () => (await import('./listen.js')).registerListenCommand],
  [['changes'], async () => (await import('./changes.js')).registerChangesCommands],
  [['vercel'], async () => (await import('./vercel.js')).registerVercelCommand],
];

/** The groups to register: the one naming the command, or all of them (help, `--version`, a mistyped command). */
function groupsFor(command: string | undefined) {
  const named = COMMAND_GROUPS.filter(([names]) => command !== undefined && names.includes(command));
  return named.length > 0 ? named : COMMAND_GROUPS;
}

/**
 * `--project <dir>` (any command): the project whose jobs/, handlers/,
 * platform.json and .env to use, as HOOKRUN_PROJECT (which child processes
 * such as `dev`'s inherit). Each one is taken out of args before commander
 * parses them; the last one wins, as with any option given twice, so
 * `npm start -- --project other` overrides the script's `--project examples`.
 */
function takeProjectOption(args: string[]): string | undefined {
  let project: string | undefined;
  for (let at = args.findIndex(isProjectOption); at >= 0; at = args.findIndex(isProjectOption)) {
    const inline = args[at]!.includes('=');
    const value = inline ? args[at]!.slice('--project='.length) : args[at + 1];
    if (!value) throw new ConfigError('--project needs a folder: hookrun start --project ./my-hookrun');
    args.splice(at, inline ? 1 : 2);
    project = value;
  }
  return project;
}

function isProjectOption(arg: string): boolean {
  return arg === '--project' || arg.startsWith('--project=');
}

function newProgram(io: CliIo): Command {
  return new Command()
    .name('hookrun')
    .description('Verified, durable, exactly-once webhooks and scheduled jobs.')
    .version(HOOKRUN_VERSION, '-v, --version', 'print the hookrun version')
    .option(
      '--project <dir>',
      'the project folder: its jobs/, handlers/, platform.json and .env (default: HOOKRUN_PROJECT, package.json\'s "hookrun": { "project" }, ./hookrun/, else the working directory)',
    )
    .showHelpAfterError('(hookrun <command> --help shows how to use it)')
    .configureOutput({ writeOut: (text) => io.stdout(text), writeErr: (text) => io.stderr(text) })
    .exitOverride();
}

/** How a CLI run ended: its exit code, and whether an error ended it (the bin then exits at once, as it always has). */
export interface CliOutcome {
  code: number;
  failed: boolean;
}

/**
 * The whole CLI as a function, so it runs without a process of its own: the
 * bin (main.ts) calls it with the process's io, the test suite in-process
 * with its own. `args` is what follows `hookrun`. Never calls process.exit.
 */
export async function run(args: readonly string[], io: CliIo): Promise<CliOutcome> {
  const rest = [...args];
  try {
    const code = await withCliIo(io, async () => {
      useProjectDir(takeProjectOption(rest), io.env, io.cwd);
      const program = newProgram(io);
      for (const register of await Promise.all(groupsFor(rest[0]).map(([, load]) => load()))) register(program);
      await program.parseAsync(rest, { from: 'user' });
    });
    return { code: code ?? EXIT_CODES.ok, failed: false };
  } catch (error) {
    if (error instanceof CommanderError) return { code: error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage, failed: true };
    io.stderr(`hookrun: ${(error as Error).message}\n`);
    return { code: error instanceof ConfigError ? EXIT_CODES.config : EXIT_CODES.failure, failed: true };
  }
}
