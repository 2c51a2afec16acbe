import type { Command } from 'commander';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { projectFiles } from './init-templates.js';
import { writeOut } from './io.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/** A package name npm accepts, made from the folder's name. */
const packageName = (dir: string) =>
  basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9-._]+/g, '-')
    .replace(/^[-._]+/, '') || 'my-hookrun';

/**
 * Write a new project into `dir` (made if missing; refused when it has files,
 * so nothing of yours is overwritten). Returns the paths written.
 */
export function initProject(dir: string): string[] {
  if (existsSync(dir) && readdirSync(dir).length > 0)
    throw new ConfigError(`${dir} is not empty: hookrun init writes a new project; pick a new folder (npx hookrun init my-hookrun).`);
  const files = projectFiles(packageName(dir), version);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text, { mode: path === '.env' ? 0o600 : 0o644 });
  }
  return Object.keys(files);
}

/** `hookrun init <dir>`: a project of your own that depends on hookrun, with one job and one handler. */
export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .description('make a new hookrun project: package.json, platform.json, jobs/, handlers/, .env, tsconfig.json, Dockerfile')
    .argument('[dir]', 'the folder to create', 'my-hookrun')
    .addHelpText('after', '\nThen:\n  cd my-hookrun && npm install && npm run dev')
    .action((dir: string) => {
      const target = resolve(dir);
      const written = initProject(target);
      writeOut(`Created ${target}:\n${written.map((f) => `  ${f}`).join('\n')}\n\nNext:\n  cd ${dir}\n  npm install\n  npm run dev\n`);
    });
}
