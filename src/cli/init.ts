import type { Command } from 'commander';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../errors.js';
import { dependencySpec, installedSpec, type PackageJson } from './init-dependency.js';
import { mergePackageJson, parsePackageJson, type PackageJsonMerge } from './init-package-json.js';
import { planFile, type FileStep, type InitResult, type SpecSource } from './init-plan.js';
import { formatInitReport } from './init-report.js';
import { projectFiles } from './init-templates.js';
import { cliIo } from './io.js';
import { say } from './output.js';
import { HOOKRUN_VERSION } from '../version.js';

/** This hookrun's own folder (its package.json's), where its install left the trace of where it came from. */
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A package name npm accepts, made from the folder's name. */
const packageName = (dir: string) =>
  basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9-._]+/g, '-')
    .replace(/^[-._]+/, '') || 'my-hookrun';

/** The text of `file`, undefined when there is none, null when something other than a file has its name. */
function readExisting(file: string): string | undefined | null {
  if (!existsSync(file)) return undefined;
  return statSync(file).isFile() ? readFileSync(file, 'utf8') : null;
}

/**
 * The sample job and handler as `.mts` in a package that is not an ES module
 * package (no `"type": "module"`): Node (and tsx) load a `.ts` file there as
 * CommonJS, where hookrun's `import`/`export default` cannot run.
 */
function asModules(files: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(files).map(([path, text]) => [/^(jobs|handlers)\/[^/]+\.ts$/.test(path) ? path.replace(/\.ts$/, '.mts') : path, text]),
  );
}

/**
 * Add a hookrun project to `dir`: a new folder, an empty one, or an existing
 * app or package, whose package.json gets hookrun's scripts and dependencies
 * and whose files are never overwritten (init-plan.ts). Every file is checked
 * before any is written: a file of hookrun's that is there with other content
 * stops init with nothing written. `packageRoot` is the running hookrun's folder.
 */
export function initProject(dir: string, packageRoot: string = PACKAGE_ROOT): InitResult {
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new ConfigError(`${dir} is a file: hookrun init needs a folder (a new one, or your app's).`);
  const pkgFile = join(dir, 'package.json');
  const pkgText = readExisting(pkgFile);
  const pkg = typeof pkgText === 'string' ? parsePackageJson(pkgText, pkgFile) : undefined;
  const appSpec = pkg && dependencySpec(pkg, 'hookrun');
  const fromInstall = appSpec === undefined ? installedSpec(packageRoot, dir) : undefined;
  const hookrunSpec = appSpec ?? fromInstall ?? `^${HOOKRUN_VERSION}`;
  const specSource: SpecSource = appSpec !== undefined ? 'app' : fromInstall !== undefined ? 'installed' : 'version';
  const ours = projectFiles(packageName(dir), hookrunSpec);
  const files = pkg === undefined || pkg.type === 'module' ? ours : asModules(ours);

  let packageJson: PackageJsonMerge | undefined;
  const steps = Object.entries(files).map(([path, text]): FileStep => {
    const existing = readExisting(join(dir, path));
    if (existing === null) return { path, kind: 'conflict' };
    if (path !== 'package.json' || existing === undefined) return planFile(path, text, existing);
    packageJson = mergePackageJson(existing, pkgFile, JSON.parse(text) as PackageJson);
    return packageJson.text === undefined ? { path, kind: 'same' } : { path, kind: 'merge', text: packageJson.text };
  });

  const conflicts = steps.filter((step) => step.kind === 'conflict').map((step) => step.path);
  if (conflicts.length > 0) {
    const them = conflicts.length === 1 ? `${conflicts[0]} is` : `${conflicts.join(', ')} are`;
    throw new ConfigError(
      `hookrun init wrote nothing: ${them} already in ${dir} with other content than hookrun's, and init overwrites nothing. ` +
        `Move ${conflicts.length === 1 ? 'it' : 'them'} aside (or delete ${conflicts.length === 1 ? 'it' : 'them'}) and run hookrun init again; your other files are kept as they are.`,
    );
  }
  for (const step of steps) {
    const file = join(dir, step.path);
    if (step.kind === 'create') {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, step.text, { mode: step.path === '.env' ? 0o600 : 0o644, flag: 'wx' });
    } else if (step.kind === 'append' || step.kind === 'merge') writeFileSync(file, step.text);
  }
  return { dir, existing: steps.some((step) => step.kind !== 'create'), steps, packageJson, hookrunSpec, specSource };
}

/** `hookrun init [dir]`: a project of your own that depends on hookrun, with one job and one handler, in a new folder or your app. */
export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .description('make a hookrun project, or add hookrun to your app: package.json, platform.json, jobs/, handlers/, .env, tsconfig.json, Dockerfile')
    .argument('[dir]', 'a new folder, or your app or package to add hookrun to (.)', 'my-hookrun')
    .addHelpText(
      'after',
      '\nThen:\n  cd my-hookrun && npm install && npm run dev\n\nIn your app: npx hookrun init . (adds files and scripts; overwrites nothing)',
    )
    .action((dir: string) => {
      const io = cliIo();
      say(formatInitReport(initProject(resolve(io.cwd, dir)), dir, io.cwd));
    });
}
