import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { SECRETS } from '../helpers/config.js';
import { REPO_ROOT, baseEnv, copyProject, pollUntil, seedDataDir } from '../helpers/spawn-hookrun.js';

/** The README's "Add your own job or handler" section: its code blocks (first line names the file) and shell lines. */
function recipes(): { files: Array<{ marker: string; code: string }>; commands: string[] } {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Add your own job or handler'), readme.indexOf('## Command line'));
  const blocks = [...section.matchAll(/```(ts|sh)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, body: m[2]! }));
  const files = blocks.filter((b) => b.lang === 'ts').map((b) => ({ marker: b.body.split('\n')[0]!.replace(/^\/\/ /, ''), code: b.body.split('\n').slice(1).join('\n') }));
  const commands = blocks.filter((b) => b.lang === 'sh').flatMap((b) => b.body.split('\n').map((l) => l.replace(/\s+#.*$/, '').trim()).filter(Boolean));
  return { files, commands };
}

const TSX = join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');

/** Run one README shell line in the copy (`npx tsx …` and `npm run …`), bounded. */
function run(line: string, cwd: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const words = line.match(/'[^']*'|\S+/g)!.map((w) => w.replace(/^'(.*)'$/, '$1'));
  const [command, args] = words[0] === 'npx' && words[1] === 'tsx' ? [process.execPath, [TSX, ...words.slice(2)]] : [words[0]!, words.slice(1)];
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env: { ...process.env, ...env }, timeout: 90_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

describe("the README's recipes, followed as written on a copy of the project", { timeout: 240_000 }, () => {
  const copy = mkdtempSync(join(tmpdir(), 'hookrun-recipes-'));
  const dataDir = join(copy, '.data');
  let server: ChildProcess | undefined;
  const env = { ...baseEnv(), DATA_DIR: dataDir, PLATFORM_CONFIG: join(copy, 'platform.json'), LOG_LEVEL: 'info' };

  beforeAll(async () => {
    copyProject(copy);
    await seedDataDir(dataDir);
  }, 120_000);

  afterAll(() => {
    server?.kill('SIGKILL');
    rmSync(copy, { recursive: true, force: true });
  });

  it('"Add a job" and "Add a handler": the files, the migration, the job run, and the handler writing its table', async () => {
    const { files, commands } = recipes();
    expect(files.map((f) => f.marker)).toEqual(['src/cron/jobs/hello.ts', 'src/db/schema.ts (append)', 'src/inbox/handlers/database.ts (replace databaseTableHandlers)']);
    expect(commands).toHaveLength(3);
    const [jobFile, schema, handler] = files as [(typeof files)[0], (typeof files)[0], (typeof files)[0]];
    writeFileSync(join(copy, jobFile.marker), `// ${jobFile.marker}\n${jobFile.code}`);
    appendFileSync(join(copy, 'src/db/schema.ts'), `\n${schema.code}`);
    const handlersPath = join(copy, 'src/inbox/handlers/database.ts');
    const before = readFileSync(handlersPath, 'utf8');
    const empty = 'export const databaseTableHandlers: Record<string, TableHandler> = {};';
    expect(before).toContain(empty); // the recipe's "replace" still has its target
    writeFileSync(handlersPath, before.replace(empty, handler.code.trim()));

    // npx tsx src/main.ts cron run hello
    const job = await run(commands[0]!, copy, env);
    expect(job.code, job.stderr).toBe(0);
    expect(job.stdout).toMatch(/^hello succeeded in \d+ ms \(run \d+\)/);

    // npm run db:generate
    const migrations = readdirSync(join(copy, 'drizzle')).length;
    const generate = await run(commands[1]!, copy, env);
    expect(generate.code, generate.stderr + generate.stdout).toBe(0);
    const added = readdirSync(join(copy, 'drizzle')).filter((f) => f.endsWith('.sql')).sort().at(-1)!;
    expect(readdirSync(join(copy, 'drizzle')).length).toBe(migrations + 1);
    expect(readFileSync(join(copy, 'drizzle', added), 'utf8')).toContain('CREATE TABLE "hookrun"."order_status"');

    // the server from source (npm run dev), then the README's send line
    const port = 30_000 + Math.floor(Math.random() * 20_000);
    server = spawn(process.execPath, [TSX, 'src/main.ts', 'start'], { cwd: copy, env: { ...process.env, ...env, PORT: String(port) }, stdio: 'ignore' });
    await pollUntil('the dev server ready', 60_000, async () => ((await fetch(`http://127.0.0.1:${port}/ready`).catch(() => undefined))?.status === 200 ? true : undefined));
    const send = await run(commands[2]!, copy, { ...env, PORT: String(port) });
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
      expect(await db.query('SELECT order_id, status FROM hookrun.order_status')).toEqual([{ order_id: '7', status: 'paid' }]);
    } finally {
      await db.close();
    }
    expect(existsSync(join(REPO_ROOT, 'src/cron/jobs/hello.ts'))).toBe(false); // only the copy was changed
  });
});
