import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollUntil, REPO_ROOT } from '../helpers/spawn-hookrun.js';

const run = promisify(execFile);
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const NPX = process.platform === 'win32' ? 'npx.cmd' : 'npx';

/** A file a build from older sources left in dist/: the tarball must not carry it (it would be a live /cron/ghost-job). */
const GHOST = join(REPO_ROOT, 'dist', 'cron', 'jobs', 'ghost-job.js');

let work: string;
let files: string[];
let tarball: string;

/**
 * What a user gets from `npm install hookrun`: `npm pack` (which builds dist/
 * afresh through `prepare`), then an install of the tarball into an empty
 * folder outside the repository, and its bin started there.
 */
describe('the published package', () => {
  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'hookrun-pack-'));
    mkdirSync(join(REPO_ROOT, 'dist', 'cron', 'jobs'), { recursive: true });
    writeFileSync(GHOST, 'export default { run() {} };\n');
    const { stdout } = await run(NPM, ['pack', '--json', '--pack-destination', work], { cwd: REPO_ROOT, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 });
    const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>;
    files = packed!.files.map((f) => f.path);
    tarball = join(work, packed!.filename);
  }, 240_000);

  afterAll(() => {
    rmSync(GHOST, { force: true });
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('holds the built code, its declarations and the migrations, and nothing of the repository tooling', () => {
    for (const needed of ['package.json', 'README.md', 'dist/main.js', 'dist/index.js', 'dist/index.d.ts', 'dist/cron/jobs/keep-alive.js', 'drizzle/meta/_journal.json']) {
      expect(files, needed).toContain(needed);
    }
    expect(files.some((f) => /^drizzle\/0000_.*\.sql$/.test(f))).toBe(true);
    const unwanted = files.filter((f) => /^(test|bench|\.ci|src|node_modules)\//.test(f) || f.endsWith('.map') || /(^|\/)\.env$/.test(f));
    expect(unwanted).toEqual([]);
    expect(files).not.toContain('dist/cron/jobs/ghost-job.js');
  });

  it('installs into an empty project, where its bin answers --help and serves until /ready', async () => {
    const app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    await run(NPM, ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], { cwd: app, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 });

    const api = await run(process.execPath, ['--input-type=module', '-e', "const m = await import('hookrun'); console.log(typeof m.defineJob)"], { cwd: app, timeout: 30_000 });
    expect(api.stdout.trim()).toBe('function');
    expect(readFileSync(join(app, 'node_modules', 'hookrun', 'dist', 'index.d.ts'), 'utf8')).toContain('defineJob');

    const help = await run(NPX, ['hookrun', '--help'], { cwd: app, timeout: 60_000 });
    expect(help.stdout).toMatch(/start/);

    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', HOST: '127.0.0.1', PORT: '0', DATA_DIR: join(app, 'data'), LOG_LEVEL: 'info' };
    const child = spawn(NPX, ['hookrun', 'start'], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    try {
      const url = await pollUntil('the "listening" log line', 90_000, async () => {
        if (child.exitCode !== null) throw new Error(`hookrun start exited ${child.exitCode}:\n${output}`);
        return /"url":"(http:\/\/[^"]+)"/.exec(output)?.[1];
      });
      const status = await pollUntil('/ready 200', 60_000, async () => {
        const res = await fetch(`${url}/ready`).catch(() => undefined);
        await res?.arrayBuffer();
        return res?.status === 200 ? res.status : undefined;
      });
      expect(status).toBe(200);
    } finally {
      process.kill(-child.pid!, 'SIGTERM'); // npx and the node it runs
      const stopped = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 15_000))]);
      if (!stopped) process.kill(-child.pid!, 'SIGKILL');
    }
  }, 300_000);
});
