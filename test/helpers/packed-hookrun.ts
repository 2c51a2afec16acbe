import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './spawn-hookrun.js';

const run = promisify(execFile);

/** npm's flags for installs in tests: quiet, and from the local cache when it has the package. */
export const NPM_FLAGS = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];

/** What `npm pack` needs of this checkout; packed from a copy, so its rebuild never empties the dist/ other tests run. */
const PACKED_FROM = ['src', 'drizzle', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'README.md', 'docs'];

/** Run npm in a folder (bounded: an install that hangs fails the test instead of the whole run). */
export async function npm(args: string[], cwd: string): Promise<void> {
  await run('npm', [...args, ...NPM_FLAGS], { cwd, timeout: 240_000, env: { ...process.env, npm_config_update_notifier: 'false' } });
}

/**
 * What a user installs: `npm pack` of a copy of this checkout (which builds
 * dist/ afresh through `prepare`), into `work`. A file an older build left in
 * dist/ is planted first: the tarball must not carry it.
 */
export async function packHookrun(work: string): Promise<{ tarball: string; files: string[] }> {
  const checkout = join(work, 'checkout');
  for (const entry of PACKED_FROM) cpSync(join(REPO_ROOT, entry), join(checkout, entry), { recursive: true });
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(checkout, 'node_modules'), 'dir');
  mkdirSync(join(checkout, 'dist', 'cron', 'jobs'), { recursive: true });
  writeFileSync(join(checkout, 'dist', 'cron', 'jobs', 'ghost-job.js'), 'export default { run() {} };\n');
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work, '--loglevel=error'], {
    cwd: checkout,
    timeout: 180_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  const [pack] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>;
  return { tarball: join(work, pack!.filename), files: pack!.files.map((f) => f.path) };
}
