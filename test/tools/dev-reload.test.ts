import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRETS } from '../helpers/config.js';
import { checkoutCompleted, sendDelivery, type SendResult } from '../helpers/signed-deliveries.js';
import { freePort } from '../helpers/free-port.js';
import { REPO_ROOT, TEST_NODE_FLAGS, baseEnv, pollUntil, seedDataDir } from '../helpers/spawn-hookrun.js';

const TSX = join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');

describe('npm run dev (hookrun dev) on a copy of the project: edits take effect on save, no request dropped', { timeout: 240_000 }, () => {
  const copy = mkdtempSync(join(tmpdir(), 'hookrun-dev-'));
  let port: number;
  let base: string;
  const auth = { headers: { authorization: `Bearer ${SECRETS.admin}` } };
  let dev: ChildProcess | undefined;
  let output = '';

  beforeAll(async () => {
    port = await freePort(); // not a random one: it may be a port another test's connection holds
    base = `http://127.0.0.1:${port}`;
    for (const entry of ['src', 'drizzle', 'package.json', 'tsconfig.json', 'platform.json'])
      cpSync(join(REPO_ROOT, entry), join(copy, entry), { recursive: true });
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
    await seedDataDir(join(copy, '.data'));
    writeFileSync(join(copy, '.env'), 'GITHUB_WEBHOOK_SECRET=first-secret\n');
    const env: Record<string, string | undefined> = {
      ...process.env,
      ...baseEnv(),
      PORT: String(port),
      DATA_DIR: join(copy, '.data'),
      PLATFORM_CONFIG: join(copy, 'platform.json'),
      LOG_LEVEL: 'info',
    };
    delete env.GITHUB_WEBHOOK_SECRET; // from .env, so the test can change it there
    dev = spawn(process.execPath, [...TEST_NODE_FLAGS, TSX, 'src/main.ts', 'dev', '--no-scheduler'], {
      cwd: copy,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    dev.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    dev.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    await pollUntil('hookrun dev ready', 90_000, async () => {
      if (dev!.exitCode !== null) throw new Error(`hookrun dev exited with ${dev!.exitCode} before it was ready`); // its output: below
      return (await fetch(`${base}/ready`).catch(() => undefined))?.status === 200 ? true : undefined;
    }).catch((error: Error) => {
      throw new Error(`${error.message}; what hookrun dev printed:\n${output.slice(-3000)}`);
    });
  }, 180_000);

  afterAll(async () => {
    if (dev && dev.exitCode === null) {
      const exited = new Promise((resolve) => dev!.once('exit', resolve));
      dev.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
      dev.kill('SIGKILL');
    }
    rmSync(copy, { recursive: true, force: true });
  });

  it('a new job file and a handler edit are live after a save, while deliveries keep being answered 200 and every event is processed', async () => {
    let sending = true;
    const results: SendResult[] = [];
    let n = 0;
    const load = Promise.all(
      [0, 1, 2].map(async () => {
        while (sending) results.push(await sendDelivery(base, checkoutCompleted(`dev${n++}`), { timeoutMs: 60_000 }));
      }),
    );
    await pollUntil('some deliveries before the edit', 20_000, async () => (results.length >= 10 ? true : undefined));

    // 1. a new job file
    writeFileSync(
      join(copy, 'src/cron/jobs/hello.ts'),
      `import type { EngineJobSpec } from '../job.js';\nexport default { run() {} } satisfies EngineJobSpec;\n`,
    );
    await pollUntil('the new job listed', 60_000, async () => {
      const { jobs } = (await (await fetch(`${base}/api/cron/jobs`, auth)).json()) as { jobs: Array<{ name: string }> };
      return jobs.some((j) => j.name === 'hello') ? true : undefined;
    });
    const ran = await fetch(`${base}/cron/hello`, { method: 'POST', headers: { authorization: `Bearer ${SECRETS.cron}` } });
    expect(ran.status).toBe(200);

    // 2. a handler edit: orders changes now fail with a message only the new code has
    const handlersPath = join(copy, 'src/inbox/handlers/database-changes.ts');
    writeFileSync(
      handlersPath,
      readFileSync(handlersPath, 'utf8').replace(
        'export const databaseTableHandlers: Record<string, TableHandler> = {};',
        `export const databaseTableHandlers: Record<string, TableHandler> = { orders: async () => { throw new Error('orders handler v2'); } };`,
      ),
    );
    const sendOrder = () =>
      fetch(`${base}/webhooks/database`, {
        method: 'POST',
        headers: { authorization: `Bearer ${SECRETS.database}`, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'INSERT', table: 'orders', schema: 'public', record: { id: 1 }, old_record: null }),
      });
    await pollUntil('the edited handler running', 60_000, async () => {
      const answer = (await (await sendOrder()).json()) as { id: number };
      // An order the old server stored waits for the new one to boot (seconds on a loaded machine): past 10 s, send another.
      const event = await pollUntil('processed once', 10_000, async () => {
        const { event } = (await (await fetch(`${base}/api/events/${answer.id}`, auth)).json()) as { event: { status: string; lastError: string | null } };
        return event.status === 'pending' ? undefined : event;
      }).catch(() => undefined);
      return event?.lastError?.startsWith('orders handler v2') ? true : undefined;
    });

    sending = false;
    await load;
    const statuses = results.map((r) => ('status' in r ? r.status : r.error));
    expect(
      statuses.filter((s) => s !== 200),
      `answers other than 200 around the reloads:\n${output.slice(-3000)}`,
    ).toEqual([]);
    expect(output).toMatch(/restarting the server/);
    // nothing lost: every acknowledged checkout stored and processed
    const { counts } = (await (await fetch(`${base}/api/events/counts`, auth)).json()) as { counts: Record<string, number> };
    await pollUntil('the backlog processed', 30_000, async () => {
      const now = ((await (await fetch(`${base}/api/events/counts`, auth)).json()) as { counts: Record<string, number> }).counts;
      return now.pending === 0 ? true : undefined;
    });
    const stored = (await (await fetch(`${base}/api/events?source=payments&limit=200`, auth)).json()) as { events: unknown[] };
    expect(stored.events.length).toBe(Math.min(200, results.length));
    expect(counts.dead ?? 0).toBe(0);
  });

  it('prints the port people call, and reloads on a .env edit (read afresh) and on a new migration file', async () => {
    const listening = [...output.matchAll(/hookrun listening on (http:\/\/\S+?)(?=["\s])/g)].map((m) => m[1]);
    expect(listening.length).toBeGreaterThan(0);
    expect(new Set(listening)).toEqual(new Set([base]));

    const github = (secret: string) => {
      const body = JSON.stringify({ zen: 'Keep it logically awesome.' });
      const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
      const headers = {
        'content-type': 'application/json',
        'x-hub-signature-256': signature,
        'x-github-event': 'ping',
        'x-github-delivery': `d-${Math.random()}`,
      };
      return fetch(`${base}/webhooks/github`, { method: 'POST', headers, body }).then(async (r) => (await r.arrayBuffer(), r.status));
    };
    expect(await github('first-secret')).toBe(200);
    writeFileSync(join(copy, '.env'), 'GITHUB_WEBHOOK_SECRET=second-secret\n');
    await pollUntil('the new .env value in use', 60_000, async () => ((await github('second-secret')) === 200 ? true : undefined));
    expect(await github('first-secret')).toBe(400);

    const restarts = () => output.split('restarting the server').length - 1;
    const before = restarts();
    writeFileSync(join(copy, 'drizzle', 'notes.txt'), 'a file in the migrations folder\n');
    await pollUntil('a restart after the migrations folder changed', 60_000, async () => (restarts() > before ? true : undefined));
    await pollUntil('ready again', 60_000, async () => ((await fetch(`${base}/ready`).catch(() => undefined))?.status === 200 ? true : undefined));
  });

  it("watches the project's migrations/, made after dev started, and names each file once (the project's .env is the working directory's)", async () => {
    const watching = JSON.parse(output.split('\n').find((line) => line.includes('"watching"'))!) as { watching: string[] };
    expect(watching.watching.filter((path) => path === join(copy, '.env'))).toHaveLength(1);
    expect(new Set(watching.watching).size).toBe(watching.watching.length);
    expect(watching.watching).toContain(join(copy, 'migrations'));

    const applied = (name: string) => output.includes(`"migrations":["${name}"]`);
    mkdirSync(join(copy, 'migrations'));
    writeFileSync(join(copy, 'migrations', '0001_order_notes.sql'), 'CREATE TABLE order_notes (id int PRIMARY KEY);\n');
    await pollUntil('the first project migration applied by a restart', 60_000, async () => (applied('0001_order_notes.sql') ? true : undefined));
    // The folder did not exist when dev started: a file saved in it later reloads too.
    writeFileSync(join(copy, 'migrations', '0002_order_tags.sql'), 'CREATE TABLE order_tags (id int PRIMARY KEY);\n');
    await pollUntil('the second project migration applied by a restart', 60_000, async () => (applied('0002_order_tags.sql') ? true : undefined));
    await pollUntil('ready again', 60_000, async () => ((await fetch(`${base}/ready`).catch(() => undefined))?.status === 200 ? true : undefined));
  });
});
