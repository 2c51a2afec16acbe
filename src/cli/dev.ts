import type { Command } from 'commander';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { environmentWithoutDotEnv } from '../config/dot-env.js';
import { MIGRATIONS_FOLDER } from '../db/database.js';
import { startReloader } from '../dev/reloader.js';
import { createLogger } from '../log.js';
import { cliIo, loadCliConfig } from './io.js';

/** The folder of the code this process runs (`src/` under tsx, `dist/` when compiled): a change anywhere in it reloads. */
const CODE_DIR = dirname(dirname(fileURLToPath(import.meta.url)));

/** `hookrun dev` (what `npm run dev` runs): `start`, reloaded when a project's job, handler, migration, platform.json or .env (or, in a checkout, hookrun's own code or migrations) changes. */
export function registerDevCommand(program: Command): void {
  program
    .command('dev')
    .description(
      'run `hookrun start` and restart it when jobs/, handlers/, migrations/, platform.json, .env (or, in a checkout, src/ or drizzle/) change, holding requests meanwhile (for development)',
    )
    .option('--no-scheduler', 'do not run the built-in scheduler')
    .addHelpText('after', '\n`npm run dev` runs this from src/ with tsx: a new job file or a handler edit takes effect on save, no build.')
    .action(async (flags: { scheduler: boolean }) => {
      const config = loadCliConfig();
      const log = createLogger(config.logLevel);
      // The project's own files, and hookrun's code when it is a checkout (an installed package does not change under you).
      const checkout = !CODE_DIR.includes(`${sep}node_modules${sep}`);
      // Both .env files start reads (the project's and the working directory's): one path when the project is the working directory.
      const watching = [
        ...new Set([
          ...['jobs', 'handlers', 'migrations', '.env'].map((name) => join(config.projectDir, name)),
          config.platformConfigPath,
          resolve(cliIo().cwd, '.env'),
          ...(checkout ? [CODE_DIR, MIGRATIONS_FOLDER] : []),
        ]),
      ];
      const reloader = await startReloader({
        port: config.port,
        host: config.host,
        watch: watching,
        command: { file: process.argv[1]!, args: ['start', ...(flags.scheduler ? [] : ['--no-scheduler'])] },
        env: environmentWithoutDotEnv(cliIo().env),
        log,
      });
      log.info({ url: reloader.url, watching }, `hookrun dev listening on ${reloader.url}; saving a file reloads the server`);
      const stop = () => void reloader.close().then(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
