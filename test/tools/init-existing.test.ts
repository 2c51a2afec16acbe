import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { installedSpec } from '../../src/cli/init-dependency.js';
import { initProject } from '../../src/cli/init.js';
import { runCliInProcess } from '../helpers/cli.js';
import { useProjectDirs } from '../helpers/project-dir.js';

const { version } = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };

/** An app made by `npm init -y` (no `"type"`: CommonJS) that grew scripts, dependencies and files of its own; indented by 4. */
const APP_PACKAGE = {
  name: 'shop-api',
  version: '1.0.0',
  description: 'the shop',
  main: 'index.js',
  scripts: { test: 'jest', start: 'node index.js', lint: 'eslint .' },
  keywords: [],
  author: '',
  license: 'ISC',
  dependencies: { express: '^4.21.0' },
  devDependencies: { jest: '^29.7.0', typescript: '^5.4.0' },
};
const OWN_CRON_SECRET = 'their-own-cron-secret-0123456789abcdef0123456789';
const APP_FILES = {
  'package.json': `${JSON.stringify(APP_PACKAGE, null, 4)}\n`,
  'index.js': "require('express')().listen(3000);\n",
  'README.md': '# shop-api\n',
  '.gitignore': 'node_modules\ncoverage/\n',
  '.env': `CRON_SECRET=${OWN_CRON_SECRET}\nSHOP_NAME=acme\n`,
};

/** Every file under `dir` with its bytes and mode, by relative path: what a run must leave alone. */
function snapshot(dir: string): Record<string, { text: string; mode: number }> {
  const files: Record<string, { text: string; mode: number }> = {};
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else files[relative(dir, path)] = { text: readFileSync(path, 'utf8'), mode: statSync(path).mode & 0o777 };
    }
  };
  walk(dir);
  return files;
}

const init = (cwd: string, dir = '.') => runCliInProcess(['init', dir], {}, cwd);

describe('hookrun init into an existing app', () => {
  const makeDir = useProjectDirs('hookrun-init-');

  it("adds hookrun's files, scripts and dependencies to an npm init -y package, keeping all of its own", async () => {
    const app = makeDir(APP_FILES);
    const result = await init(app);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);

    const text = readFileSync(join(app, 'package.json'), 'utf8');
    expect(text).toMatch(/^ {4}"name"/m);
    const pkg = JSON.parse(text) as typeof APP_PACKAGE & {
      scripts: Record<string, string>;
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    for (const [key, value] of Object.entries(APP_PACKAGE))
      if (typeof value === 'object') expect(pkg[key as keyof typeof pkg]).toMatchObject(value);
      else expect(pkg[key as keyof typeof pkg]).toBe(value);
    expect(pkg).not.toHaveProperty('type');
    expect(pkg.scripts).toEqual({
      ...APP_PACKAGE.scripts,
      dev: 'hookrun dev',
      'hookrun:start': expect.stringContaining('hookrun start'),
      'hookrun:test': 'tsc --noEmit',
    });
    expect(pkg.dependencies).toEqual({ express: '^4.21.0', hookrun: `^${version}` });
    expect(pkg.devDependencies).toMatchObject({ jest: '^29.7.0', typescript: '^5.4.0', '@types/node': expect.any(String) });

    // CommonJS package: the sample job and handler are .mts, which Node loads as ES modules there.
    expect(readdirSync(join(app, 'jobs'))).toEqual(['keep-alive.mts']);
    expect(readdirSync(join(app, 'handlers'))).toEqual(['welcome-email.mts']);
    expect(readFileSync(join(app, 'index.js'), 'utf8')).toBe(APP_FILES['index.js']);
    expect(readFileSync(join(app, 'README.md'), 'utf8')).toBe(APP_FILES['README.md']);
    expect(readFileSync(join(app, '.gitignore'), 'utf8')).toBe('node_modules\ncoverage/\n.data/\n.env\n');
    const env = readFileSync(join(app, '.env'), 'utf8');
    expect(env.startsWith(APP_FILES['.env'])).toBe(true);
    expect(env.match(/^CRON_SECRET=/gm)).toHaveLength(1);
    expect(env).toMatch(/^PAYMENTS_WEBHOOK_SECRET=whsec_\S+$/m);
    expect(env).toMatch(/^ADMIN_TOKEN=\S+$/m);

    expect(result.stdout).toContain(`Added hookrun to ${app}`);
    expect(result.stdout).toContain('script hookrun:start: exec hookrun start');
    expect(result.stdout).toContain('(your "start" is kept)');
    expect(result.stdout).toContain(`dependencies: hookrun@^${version}`);
    expect(result.stdout).toContain('.env: added PAYMENTS_WEBHOOK_SECRET, AUTH_WEBHOOK_SECRET, DATABASE_WEBHOOK_SECRET, ADMIN_TOKEN');
    expect(result.stdout).toContain("kept yours, hookrun's not written: README.md");
    expect(result.stdout).toMatch(/if npm install ends in E404 there, install hookrun from where you got it/);
    expect(result.stdout).toContain('npm run dev');
  });

  it('run again, changes nothing: same files, same bytes', async () => {
    const app = makeDir(APP_FILES);
    expect((await init(app)).code).toBe(0);
    const before = snapshot(app);
    const again = await init(app);
    expect(again.code).toBe(0);
    expect(snapshot(app)).toEqual(before);
    expect(again.stdout).toContain(`Nothing to add: hookrun is already in ${app}`);
    expect(again.stdout).toContain(`hookrun: yours kept (^${version})`);
  });

  it("a file of hookrun's there with other content: refused, named, exit 78, and nothing written", async () => {
    const app = makeDir({ ...APP_FILES, 'platform.json': '{ "crons": [] }\n', 'handlers/welcome-email.mts': 'export default {};\n' });
    const before = snapshot(app);
    const result = await init(app);
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('hookrun init wrote nothing: platform.json, handlers/welcome-email.mts are already in');
    expect(result.stderr).toContain('Move them aside');
    expect(snapshot(app)).toEqual(before);
  });

  it('a new folder: every file written, .env readable by its owner only; run again, nothing changes', async () => {
    const parent = makeDir({});
    const first = await init(parent, 'my-hookrun');
    expect(first.code).toBe(0);
    const project = join(parent, 'my-hookrun');
    expect(first.stdout).toContain(`Created ${project}:`);
    expect(statSync(join(project, '.env')).mode & 0o777).toBe(0o600);
    const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { type: string; scripts: Record<string, string> };
    expect(pkg.type).toBe('module');
    expect(Object.keys(pkg.scripts)).toEqual(['dev', 'start', 'test']);
    expect(readdirSync(join(project, 'jobs'))).toEqual(['keep-alive.ts']);
    const before = snapshot(project);
    const again = await init(parent, 'my-hookrun');
    expect(again.code).toBe(0);
    expect(snapshot(project)).toEqual(before);
  });
});

describe('the hookrun dependency init writes', () => {
  const makeDir = useProjectDirs('hookrun-init-spec-');

  /** A folder holding hookrun as npm lays it out: `<owner>/node_modules/hookrun`, the owner's package.json naming it `spec`. */
  function installedAs(root: string, owner: string, spec: string): string {
    mkdirSync(join(root, owner, 'node_modules', 'hookrun'), { recursive: true });
    writeFileSync(join(root, owner, 'package.json'), JSON.stringify({ dependencies: { hookrun: spec } }));
    return join(root, owner, 'node_modules', 'hookrun');
  }

  it('npx ./hookrun-x.tgz: the tarball, as a path from the new package.json', () => {
    const root = makeDir({});
    // npx writes the path relative to its own folder (~/.npm/_npx/<hash>).
    const hookrun = installedAs(root, 'npm-cache/_npx/0d8159af', 'file:../../../downloads/hookrun-0.1.0.tgz');
    expect(installedSpec(hookrun, join(root, 'work', 'shop-api'))).toBe('file:../../downloads/hookrun-0.1.0.tgz');
  });

  it('a git install keeps its URL; a registry install its range; a global install or a checkout says nothing', () => {
    const root = makeDir({});
    expect(installedSpec(installedAs(root, 'a', 'git+https://github.com/acme/hookrun.git#v0.1.0'), join(root, 'app'))).toBe(
      'git+https://github.com/acme/hookrun.git#v0.1.0',
    );
    expect(installedSpec(installedAs(root, 'b', '^0.1.0'), join(root, 'app'))).toBe('^0.1.0');
    mkdirSync(join(root, 'lib', 'node_modules', 'hookrun'), { recursive: true });
    expect(installedSpec(join(root, 'lib', 'node_modules', 'hookrun'), join(root, 'app'))).toBeUndefined();
    expect(installedSpec(join(import.meta.dirname, '..', '..'), join(root, 'app'))).toBeUndefined();
  });

  it("init run from a tarball's install writes that tarball, unless the app already names hookrun", async () => {
    const root = makeDir({
      'app/package.json': '{ "name": "app", "type": "module" }\n',
      'other/package.json': '{ "name": "other", "dependencies": { "hookrun": "^0.0.9" } }\n',
    });
    const hookrun = installedAs(root, 'tool', 'file:../hookrun-0.1.0.tgz');
    const result = initProject(join(root, 'app'), hookrun);
    expect(result.specSource).toBe('installed');
    expect(JSON.parse(readFileSync(join(root, 'app', 'package.json'), 'utf8'))).toMatchObject({ dependencies: { hookrun: 'file:../hookrun-0.1.0.tgz' } });
    initProject(join(root, 'other'), hookrun);
    expect(JSON.parse(readFileSync(join(root, 'other', 'package.json'), 'utf8'))).toMatchObject({ dependencies: { hookrun: '^0.0.9' } });
  });
});
