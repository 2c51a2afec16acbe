import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRICS_RENDER_MS } from '../../src/http/metrics.js';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { REPO_ROOT, seedDataDir, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';

/** The pages whose ```sh runnable blocks run here: the README and every docs/*.md page, in name order. */
const PAGES = [
  'README.md',
  ...readdirSync(join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

/** Every ```sh runnable block of those pages, with the page and the heading it sits under (for messages). */
function runnableBlocks(): Array<{ heading: string; script: string }> {
  return PAGES.flatMap((page) => {
    const text = readFileSync(join(REPO_ROOT, page), 'utf8');
    return [...text.matchAll(/```sh runnable\n([\s\S]*?)```/g)].map((m) => ({
      heading: `${page}: ${
        [
          ...text
            .slice(0, m.index)
            .replace(/```[\s\S]*?```/g, '')
            .matchAll(/^#{1,6} (.*)$/gm),
        ].at(-1)?.[1] ?? '?'
      }`,
      script: m[1]!,
    }));
  });
}

/** `set -a; . ./.env; set +a` with the shipped `.env.example`, as the docs tell a newcomer to do. */
const dotEnv = parseEnv(readFileSync(join(REPO_ROOT, '.env.example'), 'utf8')) as Record<string, string>;

describe('the documentation examples marked runnable, pasted into a shell against a live server', { timeout: 180_000 }, () => {
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
      'docs/admin-api.md: Admin API',
      'docs/jobs.md: `GET|POST /cron/<job>`',
      'docs/operations.md: Health, readiness and metrics: `GET /health`, `GET /ready`, `GET /metrics`',
      'docs/providers.md: Stripe (`/webhooks/payments`)',
      'docs/providers.md: Clerk, Svix, Standard Webhooks (`/webhooks/auth`)',
      'docs/providers.md: Supabase Database Webhooks (`/webhooks/database`)',
    ]);
    const port = new URL(server.url).port;
    for (const { heading, script } of blocks) {
      // The edits: the test server's port for 3002; curl failing on an HTTP error instead of printing it; and `npx hookrun`
      // as what it runs in an installed project (node_modules/.bin/hookrun, this build's dist/main.js). In this repository
      // `npx hookrun` would make npm link the checkout into its exec cache and run its `prepare` (a rebuild that empties
      // the dist/ other test files are running).
      const pasted = script
        .replaceAll('localhost:3002', `localhost:${port}`)
        .replace(/^curl /gm, 'curl --fail-with-body -sS ')
        .replace(/\bnpx hookrun\b/g, `node ${JSON.stringify(join(REPO_ROOT, 'dist', 'main.js'))}`);
      const result = await new Promise<{ code: number; out: string }>((resolve) => {
        execFile(
          'bash',
          ['-e', '-o', 'pipefail', '-c', pasted],
          { cwd: REPO_ROOT, env: { ...process.env, ...dotEnv, PORT: port, DATA_DIR: join(dir, 'data') }, timeout: 60_000 },
          (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, out: stdout + stderr }),
        );
      });
      expect(result.code, `${heading}:\n${pasted}\n--- output ---\n${result.out}`).toBe(0);
      expect(result.out).not.toMatch(/"error":\{"code"/);
    }
    // payments (send --curl | sh), auth (send), database (curl): one accepted delivery each. /metrics serves one rendering for
    // METRICS_RENDER_MS: the operations block's scrape may still be the one served, so read until a newer one is.
    const accepted = ['payments', 'auth', 'database'].map(
      (source) => new RegExp(`hookrun_events_received_total\\{source="${source}",outcome="accepted",reason=""\\} 1`),
    );
    let metrics = '';
    for (const deadline = Date.now() + METRICS_RENDER_MS * 5; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
      metrics = await (await fetch(`${server.url}/metrics`)).text();
      if (accepted.every((pattern) => pattern.test(metrics))) break;
    }
    for (const pattern of accepted) expect(metrics).toMatch(pattern);
  });
});
