import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectFiles } from '../../src/cli/init-templates.js';
import { SECRETS } from '../helpers/config.js';
import { createEmptyPostgresDatabase } from '../helpers/db.js';
import { dockerEnv, stageRuns, targetInstructions } from '../helpers/dockerfile.js';
import { npm, packHookrun, startFromInstall } from '../helpers/packed-hookrun.js';
import { acknowledged, checkoutCompleted, sendDelivery } from '../helpers/signed-deliveries.js';
import { pollUntil, runHookrun, spawnHookrun } from '../helpers/spawn-hookrun.js';

const run = promisify(execFile);

/** Bytes of the files under `dir` (symlinks counted as links): what an image layer of it holds. */
function treeBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? treeBytes(path) : lstatSync(path).size;
  }
  return total;
}

const megabytes = (bytes: number) => (bytes / 1e6).toFixed(1);

let work: string;
let app: string;
let dockerfile: string;
let pruned: { before: number; after: number };

/**
 * The Dockerfile's postgres target, followed outside a container on the
 * installed tarball: the project `hookrun init` writes, its production
 * dependencies (one `npm install --omit=dev`), then the postgres-deps stage's
 * own RUN line as written in the generated Dockerfile, as `sh -c` runs it.
 */
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'hookrun-postgres-image-'));
  const { tarball } = await packHookrun();
  app = join(work, 'app');
  for (const [path, text] of Object.entries(projectFiles('my-hookrun', `file:${tarball}`))) {
    mkdirSync(join(app, path, '..'), { recursive: true });
    writeFileSync(join(app, path), text);
  }
  dockerfile = projectFiles('my-hookrun', `file:${tarball}`).Dockerfile!;
  await startFromInstall(app);
  await npm(['install', '--omit=dev'], app);
  const modules = join(app, 'node_modules');
  expect(existsSync(join(modules, '@electric-sql', 'pglite')), 'PGlite is a production dependency before the prune').toBe(true);
  const before = treeBytes(modules);
  for (const command of stageRuns(dockerfile, 'postgres-deps')) await run('/bin/sh', ['-c', command], { cwd: app, timeout: 60_000 });
  pruned = { before, after: treeBytes(modules) };
  console.log(`production node_modules: ${megabytes(pruned.before)} MB installed, ${megabytes(pruned.after)} MB after the postgres target's prune`);
}, 600_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the Dockerfile's postgres target, on the installed tarball (no container engine runs here)", () => {
  it("its prune leaves out PGlite and the types-only packages, and keeps esbuild's platform binary (tsx loads the .ts handlers with it)", () => {
    const modules = join(app, 'node_modules');
    expect(existsSync(join(modules, '@electric-sql', 'pglite'))).toBe(false);
    expect(existsSync(join(modules, 'hookrun', 'node_modules', '@electric-sql', 'pglite'))).toBe(false);
    expect(existsSync(join(modules, '@octokit', 'webhooks-types'))).toBe(false);
    expect(readdirSync(join(modules, '@esbuild')).length, "esbuild's platform package").toBeGreaterThan(0);
    expect(pruned.before - pruned.after, 'PGlite alone is over 20 MB').toBeGreaterThan(20e6);
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'with DATABASE_URL: migrates and checks, serves a signed Stripe event to processed, a cron job, the console',
    async () => {
      const database = await createEmptyPostgresDatabase(process.env.TEST_DATABASE_URL);
      const target = targetInstructions(dockerfile, 'postgres');
      const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(target)![1]!) as string[];
      const mainJs = join(app, cmd[1]!);
      const env = { ...dockerEnv(target), HOST: '127.0.0.1', PORT: '0', DATABASE_URL: database.url, DATA_DIR: join(work, 'no-data-dir') };
      try {
        for (const command of ['migrate', 'check']) {
          const done = await runHookrun({ mainJs, cwd: app, args: [command], env, timeoutMs: 60_000 });
          expect(done.code, `${command}:\n${done.output}`).toBe(0);
        }
        const server = await spawnHookrun({ mainJs, cwd: app, args: cmd.slice(2), env, readyTimeoutMs: 60_000 });
        try {
          const sent = await sendDelivery(server.url, checkoutCompleted(`image_${Date.now()}`));
          expect(acknowledged(sent), JSON.stringify(sent)).toBe(true);
          const id = (JSON.parse((sent as { body: string }).body) as { id: number }).id;
          const status = await pollUntil(
            'the event processed',
            30_000,
            async () => {
              const detail = (await (await fetch(`${server.url}/api/events/${id}`, { headers: { authorization: `Bearer ${SECRETS.admin}` } })).json()) as {
                event: { status: string };
              };
              return detail.event.status === 'processed' ? detail.event.status : undefined;
            },
            200,
          );
          expect(status).toBe('processed');
          const cron = await fetch(`${server.url}/cron/keep-alive`, { method: 'POST', headers: { authorization: `Bearer ${SECRETS.cron}` } });
          expect(cron.status, await cron.text()).toBe(200);
          const login = await fetch(`${server.url}/admin/login`);
          expect(login.status, 'the console answers').toBe(200);
        } finally {
          await server.stop();
        }
        expect(server.output()).not.toMatch(/pglite/i);
        expect(existsSync(join(work, 'no-data-dir')), 'nothing written to DATA_DIR').toBe(false);
      } finally {
        await database.drop();
      }
    },
    180_000,
  );

  it('without DATABASE_URL: start, check and migrate each exit 78 with one line that says what to do, no module-not-found stack', async () => {
    const target = targetInstructions(dockerfile, 'postgres');
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(target)![1]!) as string[];
    const env = { ...dockerEnv(target), HOST: '127.0.0.1', PORT: '0', DATABASE_URL: undefined, DATA_DIR: join(work, 'data') };
    for (const args of [cmd.slice(2), ['check'], ['migrate']]) {
      const done = await runHookrun({ mainJs: join(app, cmd[1]!), cwd: app, args, env, timeoutMs: 60_000 });
      expect(done.code, `${args.join(' ')}:\n${done.output}`).toBe(78);
      expect(done.output, args.join(' ')).toContain('DATABASE_URL is not set and the embedded database (@electric-sql/pglite) is not installed');
      expect(done.output, args.join(' ')).toMatch(/set DATABASE_URL to your PostgreSQL, or build the image without --target postgres/);
      expect(done.output, args.join(' ')).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find (module|package)|\n\s+at /);
    }
    expect(existsSync(join(work, 'data')), 'no data dir made').toBe(false);
  }, 120_000);
});
