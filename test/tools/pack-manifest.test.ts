import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/spawn-hookrun.js';

const run = promisify(execFile);
const SCRIPT = join(REPO_ROOT, 'scripts', 'pack-manifest.mjs');

type Manifest = { scripts: Record<string, string> };

/** A folder holding a copy of this repository's package.json, where the script runs as npm runs prepack/postpack. */
const folder = mkdtempSync(join(tmpdir(), 'hookrun-pack-manifest-'));
copyFileSync(join(REPO_ROOT, 'package.json'), join(folder, 'package.json'));
const original = readFileSync(join(folder, 'package.json'), 'utf8');
const manifest = () => JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as Manifest;
const packManifest = (command: string) => run(process.execPath, [SCRIPT, command], { cwd: folder, timeout: 30_000 });

afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('the package.json the tarball carries', () => {
  it('npm pack and npm publish build first and strip prepare (postpack puts it back): a git install still builds with it', () => {
    const { scripts } = JSON.parse(original) as Manifest;
    expect(scripts.prepare).toBe('npm run build');
    expect(scripts.prepack).toBe('npm run build && node scripts/pack-manifest.mjs strip');
    expect(scripts.postpack).toBe('node scripts/pack-manifest.mjs restore');
    for (const installScript of ['preinstall', 'install', 'postinstall']) expect(scripts[installScript], installScript).toBeUndefined();
  });

  it('strip leaves no prepare and changes nothing else; restore gives the file back byte for byte', async () => {
    await packManifest('strip');
    const stripped = manifest();
    expect(stripped.scripts.prepare).toBeUndefined();
    const { prepare: _prepare, ...rest } = (JSON.parse(original) as Manifest).scripts;
    expect(stripped).toEqual({ ...(JSON.parse(original) as Manifest), scripts: rest });
    await packManifest('restore');
    expect(readFileSync(join(folder, 'package.json'), 'utf8')).toBe(original);
  });

  it('after a pack that stopped between prepack and postpack, the next strip starts from the saved file', async () => {
    await packManifest('strip');
    await packManifest('strip');
    expect(manifest().scripts.prepare).toBeUndefined();
    await packManifest('restore');
    expect(readFileSync(join(folder, 'package.json'), 'utf8')).toBe(original);
  });
});
