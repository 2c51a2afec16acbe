import type { Command } from 'commander';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../config.js';
import { startReloader } from '../dev/reloader.js';
import { createLogger } from '../log.js';

/** The folder of the code this process runs (`src/` under tsx, `dist/` when compiled): a change anywhere in it reloads. */
const CODE_DIR = dirname(dirname(fileURLToPath(import.meta.url)));

/** `hookrun dev` (what `npm run dev` runs): `start`, reloaded when a project's job, handler or platform.json (or hookrun's own code, in a checkout) changes. */
export function registerDevCommand(program: Command): void {
  program
    .command('dev')
    .description('run `hookrun start` and restart it when the code or platform.json changes, holding requests meanwhile (for development)')
    .option('--no-scheduler', 'do not run the built-in scheduler')
    .addHelpText('after', '\n`npm run dev` runs this from src/ with tsx: a new job file or a handler edit takes effect on save, no build.')
    .action(async (flags: { scheduler: boolean }) => {
      const config = loadConfig();
      const log = createLogger(config.logLevel);
      // The project's own files, and hookrun's code when it is a checkout (an installed package does not change under you).
      const watch = [join(config.projectDir, 'jobs'), join(config.projectDir, 'handlers'), config.platformConfigPath, ...(CODE_DIR.includes(`${sep}node_modules${sep}`) ? [] : [CODE_DIR])];
      const reloader = await startReloader({
        port: config.port,
        host: config.host,
        watch,
        command: { file: process.argv[1]!, args: ['start', ...(flags.scheduler ? [] : ['--no-scheduler'])] },
        log,
      });
      log.info({ url: reloader.url, watching: watch }, `hookrun dev listening on ${reloader.url}; saving a file reloads the server`);
      const stop = () => void reloader.close().then(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
