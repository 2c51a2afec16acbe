import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { REPO_ROOT, seedDataDir, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';

/** Every ```sh runnable block of the README, with the heading it sits under (for messages). */
function runnableBlocks(): Array<{ heading: string; script: string }> {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  return [...readme.matchAll(/```sh runnable\n([\s\S]*?)```/g)].map((m) => ({
    heading: [...readme.slice(0, m.index).matchAll(/^#{2,} (.*)$/gm)].at(-1)?.[1] ?? '?',
    script: m[1]!,
  }));
}

/** `set -a; . ./.env; set +a` with the shipped `.env.example`, as the README tells a newcomer to do. */
const dotEnv = parseEnv(readFileSync(join(REPO_ROOT, '.env.example'), 'utf8')) as Record<string, string>;

describe('the README examples marked runnable, pasted into a shell against a live server', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-readme-'));
  let server: HookrunProcess;

  beforeAll(async () => {
    await Promise.all([ensureDistBuilt(), seedDataDir(join(dir, 'data'))]);
    server = await spawnHookrun({ dataDir: join(dir, 'data'), env: { ...dotEnv, SCHEDULER: 'off' } });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('each block exits 0, and no curl in it gets an HTTP error', async () => {
    const blocks = runnableBlocks();
    expect(blocks.map((b) => b.heading)).toEqual([
      '`POST /webhooks/payments` — Stripe',
      '`POST /webhooks/auth` — Clerk, Svix, Standard Webhooks',
      '`POST /webhooks/database` — Supabase Database Webhooks',
      '`GET|POST /cron/<job>`',
      '`GET /health`, `GET /ready`, `GET /metrics`',
      'Admin API',
    ]);
    const port = new URL(server.url).port;
    for (const { heading, script } of blocks) {
      // The only edits: the test server's port for 3002, and curl failing on an HTTP error instead of printing it.
      const pasted = script.replaceAll('localhost:3002', `localhost:${port}`).replace(/^curl /gm, 'curl --fail-with-body -sS ');
      const result = await new Promise<{ code: number; out: string }>((resolve) => {
        execFile('bash', ['-e', '-o', 'pipefail', '-c', pasted], { cwd: REPO_ROOT, env: { ...process.env, ...dotEnv, PORT: port, DATA_DIR: join(dir, 'data') }, timeout: 60_000 }, (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, out: stdout + stderr }),
        );
      });
      expect(result.code, `${heading}:\n${pasted}\n--- output ---\n${result.out}`).toBe(0);
      expect(result.out).not.toMatch(/"error":\{"code"/);
    }
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    // payments (send --curl | sh), auth (send), database (curl): one accepted delivery each
    for (const source of ['payments', 'auth', 'database']) expect(metrics).toMatch(new RegExp(`hookrun_events_received_total\\{source="${source}",outcome="accepted",reason=""\\} 1`));
  });
});
