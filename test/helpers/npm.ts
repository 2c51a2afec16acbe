import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** npm's flags for installs in tests: quiet, and from the local cache when it has the package. */
export const NPM_FLAGS = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];

/** Run npm in a folder (bounded: an install that hangs fails the test instead of the whole run). Free of vitest: the bench uses it too. */
export async function npm(args: string[], cwd: string): Promise<void> {
  await run('npm', [...args, ...NPM_FLAGS], { cwd, timeout: 240_000, env: { ...process.env, npm_config_update_notifier: 'false' } });
}
