import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { SECRETS } from '../helpers/config.js';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { freePort } from '../helpers/free-port.js';
import { REPO_ROOT, TEST_NODE_FLAGS, baseEnv, pollUntil, seedDataDir } from '../helpers/spawn-hookrun.js';

/** The page that holds the recipes, and its section that this test follows as written. */
const RECIPES_PAGE = 'docs/getting-started.md';
const RECIPES_HEADING = '## Your project: jobs, handlers and tables';

/** The recipes section (up to the next `## ` heading): its code blocks (first line names the file) and shell lines (after the first block, which makes the project). */
function recipes(): { files: Array<{ marker: string; code: string }>; commands: string[] } {
  const page = readFileSync(join(REPO_ROOT, RECIPES_PAGE), 'utf8');
  const start = page.indexOf(RECIPES_HEADING);
  expect(start, `${RECIPES_PAGE} has no "${RECIPES_HEADING}" section`).toBeGreaterThanOrEqual(0);
  const end = page.indexOf('\n## ', start + RECIPES_HEADING.length);
  const section = page.slice(start, end === -1 ? undefined : end);
  const blocks = [...section.matchAll(/```(ts|sh|sql)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, body: m[2]! }));
  const files = blocks
    .filter((b) => b.lang !== 'sh')
    .map((b) => ({ marker: b.body.split('\n')[0]!.replace(/^(\/\/|--) /, ''), code: b.body.split('\n').slice(1).join('\n') }));
  const commands = blocks
    .filter((b) => b.lang === 'sh')
    .slice(1)
    .flatMap((b) =>
      b.body
        .split('\n')
        .map((l) => l.replace(/\s+#.*$/, '').trim())
        .filter(Boolean),
    );
  return { files, commands };
}

const MAIN_JS = join(REPO_ROOT, 'dist', 'main.js');

/** Run one recipe shell line in the project (`npx hookrun …` is this build's dist/main.js), bounded. */
function run(line: string, cwd: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const words = line.match(/'[^']*'|\S+/g)!.map((w) => w.replace(/^'(.*)'$/, '$1'));
  expect(words.slice(0, 2)).toEqual(['npx', 'hookrun']);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...TEST_NODE_FLAGS, MAIN_JS, ...words.slice(2)],
      { cwd, env: { ...process.env, ...env }, timeout: 90_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

describe('the getting-started recipes, followed as written on a project made by hookrun init', { timeout: 240_000 }, () => {
  const project = join(mkdtempSync(join(tmpdir(), 'hookrun-recipes-')), 'my-hookrun');
  const dataDir = join(project, '.data');
  let server: ChildProcess | undefined;
  const env = { ...baseEnv(), DATA_DIR: dataDir, LOG_LEVEL: 'info' };

  beforeAll(async () => {
    await ensureDistBuilt();
    const init = await new Promise<number>((resolve) => execFile(process.execPath, [MAIN_JS, 'init', project], (error) => resolve(error ? 1 : 0)));
    expect(init).toBe(0);
    // What `npm install` gives the project, without the registry: hookrun itself (this checkout, built).
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(REPO_ROOT, join(project, 'node_modules', 'hookrun'), 'dir');
    await seedDataDir(dataDir);
  }, 120_000);

  afterAll(() => {
    server?.kill('SIGKILL');
    rmSync(join(project, '..'), { recursive: true, force: true });
  });

  it('"Add a job" and "Add a handler": the files, the migration, the job run, and the handler writing its table', async () => {
    const { files, commands } = recipes();
    expect(files.map((f) => f.marker)).toEqual(['jobs/hello.ts', 'migrations/0001_order_status.sql', 'handlers/order-status.ts']);
    expect(commands).toHaveLength(2);
    for (const file of files) {
      mkdirSync(join(project, file.marker, '..'), { recursive: true });
      writeFileSync(join(project, file.marker), file.code);
    }

    // npx hookrun cron run hello
    const job = await run(commands[0]!, project, env);
    expect(job.code, job.stderr).toBe(0);
    expect(job.stdout).toMatch(/^hello succeeded in \d+ ms \(run \d+\)$/m);
    expect(job.stdout).toContain('hello from a job');

    // the server, then the recipe's send line
    const port = await freePort();
    server = spawn(process.execPath, [...TEST_NODE_FLAGS, MAIN_JS, 'start'], {
      cwd: project,
      env: { ...process.env, ...env, PORT: String(port) },
      stdio: 'ignore',
    });
    await pollUntil('the server ready', 60_000, async () =>
      (await fetch(`http://127.0.0.1:${port}/ready`).catch(() => undefined))?.status === 200 ? true : undefined,
    );
    const send = await run(commands[1]!, project, { ...env, PORT: String(port) });
    expect(send.code, send.stderr).toBe(0);
    const auth = { headers: { authorization: `Bearer ${SECRETS.admin}` } };
    await pollUntil('the change processed', 20_000, async () => {
      const { events } = (await (await fetch(`http://127.0.0.1:${port}/api/events?source=database`, auth)).json()) as { events: Array<{ status: string }> };
      return events[0]?.status === 'processed' ? true : undefined;
    });
    server.kill('SIGTERM');
    await new Promise((resolve) => server!.once('exit', resolve));
    server = undefined;
    const db = await openDatabase({ dataDir });
    try {
      expect(await db.query('SELECT order_id, status FROM public.order_status')).toEqual([{ order_id: '7', status: 'paid' }]);
    } finally {
      await db.close();
    }
  });
});
