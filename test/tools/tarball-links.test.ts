import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { relativeLinks } from '../helpers/markdown-links.js';
import { PACKAGE_VERSION } from '../helpers/package-version.js';
import { REPO_ROOT } from '../helpers/spawn-hookrun.js';

const run = promisify(execFile);

/**
 * The files `npm pack` would put in the tarball, by npm's own reckoning of package.json "files" (no build, no
 * scripts: the markdown pages do not depend on dist/, so a checkout without one gives the same answer for them).
 */
async function listPackedFiles(): Promise<string[]> {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', '--loglevel=error'], {
    cwd: REPO_ROOT,
    timeout: 60_000,
    maxBuffer: 16 * 1024 * 1024,
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ files: Array<{ path: string }> }>;
  return packed!.files.map((f) => f.path);
}

/** Asked of npm once for the file's tests (a second `npm pack --dry-run` would give the same list). */
let packing: Promise<string[]> | undefined;
const packedFiles = () => (packing ??= listPackedFiles());

describe('the tarball', () => {
  it('ships LICENSE beside the package.json that names its licence', async () => {
    const files = await packedFiles();
    expect(JSON.parse(readFileSync(posix.join(REPO_ROOT, 'package.json'), 'utf8')).license).toBe('MIT');
    expect(files).toContain('LICENSE');
    expect(readFileSync(posix.join(REPO_ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n/);
  });

  it('every relative link of a shipped markdown page reaches a file the tarball ships', async () => {
    const files = await packedFiles();
    const shipped = new Set(files);
    const broken: string[] = [];
    for (const page of files.filter((f) => f.endsWith('.md'))) {
      for (const target of relativeLinks(readFileSync(posix.join(REPO_ROOT, page), 'utf8'))) {
        const path = decodeURI(target.split(/[#?]/)[0]!);
        if (path === '') continue;
        const file = posix.normalize(posix.join(posix.dirname(page), path)).replace(/\/$/, '');
        const reached = shipped.has(file) || files.some((f) => f.startsWith(`${file}/`));
        if (!reached) broken.push(`${page}: ${target} (${file} is not in the tarball)`);
      }
    }
    expect(broken).toEqual([]);
  }, 60_000);

  it('the install steps of the shipped pages name the tarball this version packs', async () => {
    const named = (await packedFiles())
      .filter((f) => f.endsWith('.md'))
      .flatMap((page) => [...readFileSync(posix.join(REPO_ROOT, page), 'utf8').matchAll(/\bhookrun-\d+\.\d+\.\d+\.tgz\b/g)].map((m) => `${page}: ${m[0]}`));
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((entry) => !entry.endsWith(`: hookrun-${PACKAGE_VERSION}.tgz`))).toEqual([]);
  });
});
