import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliInProcess } from '../helpers/cli.js';
import { useProjectDirs } from '../helpers/project-dir.js';

const REPO_ROOT = join(import.meta.dirname, '..', '..');

/** A job file and a platform.json scheduling it, at `folder` ('' for the folder itself). */
function project(folder: string, job: string, schedule = '0 3 * * *'): Record<string, string> {
  const at = (path: string) => (folder ? `${folder}/${path}` : path);
  return {
    [at(`jobs/${job}.ts`)]: 'export default { run() {} };\n',
    [at('platform.json')]: JSON.stringify({ crons: [{ path: `/cron/${job}`, schedule }] }),
  };
}

/** A Next.js app's root as docs/deploy.md lays it out: app/, package.json, the project in hookrun/. */
const NEXT_APP = {
  'app/page.tsx': 'export default function Home() { return null; }\n',
  'package.json': JSON.stringify({ name: 'the-product', private: true, dependencies: { hookrun: '*', next: '16.4.6' } }),
};

/** The `path`s of the vercel.json `hookrun vercel --print` would write, run in `cwd`. */
async function vercelPaths(cwd: string, env: Record<string, string> = {}, args: string[] = []): Promise<string[]> {
  const result = await runCliInProcess(['vercel', '--print', ...args], env, cwd);
  expect(result.code, result.stderr).toBe(0);
  return (JSON.parse(result.stdout) as { crons: Array<{ path: string }> }).crons.map((c) => c.path);
}

/** One fenced ```json block of docs/deploy.md: the first after `lead`. */
function deployDocJson(lead: string): unknown {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'deploy.md'), 'utf8');
  const at = doc.indexOf(lead);
  expect(at, `docs/deploy.md says "${lead}"`).toBeGreaterThan(-1);
  const block = /```json\n([\s\S]*?)```/.exec(doc.slice(at));
  return JSON.parse(block![1]!);
}

describe('the project folder, found from where the CLI runs', () => {
  const makeDir = useProjectDirs('hookrun-approot-');

  it("from a Next.js app's root, hookrun vercel and cron next use the project in hookrun/", async () => {
    const app = makeDir({ ...NEXT_APP, ...project('hookrun', 'nightly') });
    expect(await vercelPaths(app)).toEqual(['/api/cron/nightly', '/api/cron/hookrun-drain']);
    const next = await runCliInProcess(['cron', 'next', 'nightly', '-n', '1'], {}, app);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toContain('03:00');
  });

  it('package.json\'s "hookrun": { "project" } names a folder anywhere, relative to that package.json, also from below it', async () => {
    const app = makeDir({
      ...NEXT_APP,
      'package.json': JSON.stringify({ name: 'the-product', hookrun: { project: 'backend/jobs-project' } }),
      ...project('backend/jobs-project', 'digest'),
      ...project('hookrun', 'not-this-one'),
    });
    expect(await vercelPaths(app)).toEqual(['/api/cron/digest', '/api/cron/hookrun-drain']);
    expect(await vercelPaths(join(app, 'app'))).toEqual(['/api/cron/digest', '/api/cron/hookrun-drain']);
  });

  it('a package.json key naming no folder stops the command (exit 78), saying what to do', async () => {
    const app = makeDir({ 'package.json': JSON.stringify({ name: 'the-product', hookrun: { project: 'hookrun' } }) });
    const result = await runCliInProcess(['vercel', '--print'], {}, app);
    expect(result.code).toBe(78);
    expect(result.stderr).toMatch(/"hookrun": \{ "project": "hookrun" \} names .*hookrun, which does not exist: create it \(npx hookrun init hookrun\)/);
  });

  it('--project wins over HOOKRUN_PROJECT, which wins over package.json, which wins over ./hookrun/; a project in the working directory wins over ./hookrun/', async () => {
    const app = makeDir({
      'package.json': JSON.stringify({ name: 'the-product', hookrun: { project: 'from-package' } }),
      ...project('from-package', 'package-job'),
      ...project('from-env', 'env-job'),
      ...project('from-flag', 'flag-job'),
      ...project('hookrun', 'folder-job'),
    });
    expect(await vercelPaths(app, { HOOKRUN_PROJECT: 'from-env' }, ['--project', 'from-flag'])).toContain('/api/cron/flag-job');
    expect(await vercelPaths(app, { HOOKRUN_PROJECT: 'from-env' })).toContain('/api/cron/env-job');
    expect(await vercelPaths(app)).toContain('/api/cron/package-job');
    const own = makeDir({ ...project('', 'own-job'), ...project('hookrun', 'folder-job') });
    expect(await vercelPaths(own)).toEqual(['/api/cron/own-job', '/api/cron/hookrun-drain']);
  });

  it('hookrun vercel warns on one line when it finds no platform.json, or one that schedules no job', async () => {
    const empty = await runCliInProcess(['vercel', '--print'], {}, makeDir({ 'package.json': JSON.stringify({ name: 'the-product' }) }));
    expect(empty.code).toBe(0);
    expect(empty.stderr).toMatch(
      /^hookrun: no \S*platform\.json, so vercel\.json gets the drain route only\. .*--project <dir>, HOOKRUN_PROJECT, or "hookrun": \{ "project": "<dir>" \} in package\.json\.\n$/,
    );
    const unscheduled = await runCliInProcess(['vercel', '--print'], {}, makeDir({ 'platform.json': JSON.stringify({ crons: [] }) }));
    expect(unscheduled.code).toBe(0);
    expect(unscheduled.stderr).toMatch(
      /^hookrun: \S*platform\.json schedules no job, so vercel\.json gets the drain route only: give a job a "schedule" in its crons\.\n$/,
    );
  });

  it("writes the vercel.json docs/deploy.md shows, from the app's root, for the platform.json it shows", async () => {
    const platformJson = deployDocJson('With this `hookrun/platform.json`:');
    const app = makeDir({
      ...NEXT_APP,
      'hookrun/jobs/nightly-report.ts': 'export default { run() {} };\n',
      'hookrun/platform.json': JSON.stringify(platformJson),
    });
    const written = await runCliInProcess(['vercel'], {}, app);
    expect(written.code, written.stderr).toBe(0);
    expect(written.stdout).toMatch(/vercel\.json: 2 crons \(1 from \S*hookrun\/platform\.json, and the drain route\)/);
    expect(JSON.parse(readFileSync(join(app, 'vercel.json'), 'utf8'))).toEqual(deployDocJson('writes this `vercel.json`'));
  });
});
