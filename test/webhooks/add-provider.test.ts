import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRETS } from '../helpers/config.js';
import { REPO_ROOT, TEST_NODE_FLAGS, baseEnv, copyProject, pollUntil, seedDataDir } from '../helpers/spawn-hookrun.js';

/** The page that holds the "Add a provider" recipe, and its heading. */
const RECIPE_PAGE = 'docs/providers.md';
const RECIPE_HEADING = '## Add a provider to hookrun';

/** The "Add a provider" recipe (up to the next `## ` heading): the provider file and the line it adds to PROVIDERS. */
function recipe(): { file: string; code: string; listLine: string } {
  const page = readFileSync(join(REPO_ROOT, RECIPE_PAGE), 'utf8');
  const start = page.indexOf(RECIPE_HEADING);
  expect(start, `${RECIPE_PAGE} has no "${RECIPE_HEADING}" section`).toBeGreaterThanOrEqual(0);
  const end = page.indexOf('\n## ', start + RECIPE_HEADING.length);
  const section = page.slice(start, end === -1 ? undefined : end);
  const [provider, list] = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const [marker, ...code] = provider!.split('\n');
  const [listMarker, listLine] = list!.split('\n');
  expect(listMarker).toBe('// src/webhooks/providers/index.ts (add to PROVIDERS)');
  return { file: marker!.replace(/^\/\/ /, ''), code: code.join('\n'), listLine: listLine!.trim() };
}

const TSX = join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
/** The server runs in ONE process (tsx's loader, not its CLI, which forks a child a SIGKILL would orphan). */
const START = [...TEST_NODE_FLAGS, '--import', 'tsx', 'src/main.ts', 'start'];
const TSC = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const LINEAR_SECRET = 'lin_wh_test_secret_for_the_recipe';

/** How long one command on the copy may take: the type check of the whole copy took 83 s in a busy run on a slow day. */
const COMMAND_BOUND_MS = 200_000;

function run(args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd, env: { ...process.env, ...env }, timeout: COMMAND_BOUND_MS }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

/** A Linear delivery signed as Linear signs it: hex HMAC-SHA256 of the body under the webhook's secret. */
function linearDelivery(body: string, secret = LINEAR_SECRET): Record<string, string> {
  return { 'content-type': 'application/json', 'linear-signature': createHmac('sha256', secret).update(body).digest('hex'), 'linear-delivery': randomUUID() };
}

/** How long the copy may take to start from its sources (tsx compiles them on load): generous, as a busy machine needs; an exit fails at once. */
const START_BOUND_MS = 180_000;

/** Start the copy's server from its sources on a free port (PORT=0); resolves with its URL once /ready answers 200. */
async function startCopy(cwd: string, env: Record<string, string | undefined>): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, START, { cwd, env: { ...process.env, ...env, PORT: '0', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const alive = () => {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the copy's server exited (${child.exitCode ?? child.signalCode}):\n${output.slice(-3000)}`);
  };
  const base = await pollUntil("the copy's server logging its URL", START_BOUND_MS, () => {
    alive();
    return /"url":"(http:\/\/[^"]+)"/.exec(output)?.[1];
  });
  await pollUntil("the copy's server ready", START_BOUND_MS, async () => {
    alive();
    return (await fetch(`${base}/ready`).catch(() => undefined))?.status === 200 ? true : undefined;
  });
  return { child, base };
}

describe('adding a provider is its file and one line in PROVIDERS (the docs/providers.md recipe, on a copy of the project)', { timeout: 240_000 }, () => {
  const copy = mkdtempSync(join(tmpdir(), 'hookrun-provider-'));
  const dataDir = join(copy, '.data');
  const env = { ...baseEnv(), DATA_DIR: dataDir, PLATFORM_CONFIG: join(copy, 'platform.json'), LINEAR_WEBHOOK_SECRET: LINEAR_SECRET };
  let server: ChildProcess | undefined;
  let base = '';

  beforeAll(async () => {
    copyProject(copy);
    const { file, code, listLine } = recipe();
    writeFileSync(join(copy, file), code);
    const listPath = join(copy, 'src/webhooks/providers/index.ts');
    const list = readFileSync(listPath, 'utf8');
    expect(list).toContain('  twilioProvider,\n] as const;');
    writeFileSync(listPath, `import { linearProvider } from './linear.js';\n${list.replace('  twilioProvider,\n', `  twilioProvider,\n  ${listLine}\n`)}`);
    await seedDataDir(dataDir);
  }, 120_000);

  afterAll(() => {
    server?.kill('SIGKILL');
    rmSync(copy, { recursive: true, force: true });
  });

  it('the copy compiles with the new provider, and a half-defined one does not', async () => {
    const half = join(copy, 'src/webhooks/providers/half.ts');
    const linear = readFileSync(join(copy, 'src/webhooks/providers/linear.ts'), 'utf8');
    writeFileSync(half, linear.replace('export const linearProvider', 'export const halfProvider').replace(/\n {2}sign: .*\n/, '\n'));
    try {
      const tsc = await run([TSC, '-p', 'tsconfig.json', '--noEmit'], copy, {});
      const errors = tsc.stdout.split('\n').filter((line) => /error TS/.test(line));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(/^src\/webhooks\/providers\/half\.ts\(/);
      expect(tsc.stdout).toMatch(/Property 'sign' is missing/);
    } finally {
      unlinkSync(half);
    }
  });

  it('/webhooks/linear verifies, stores once, refuses tampered, stale and unsigned deliveries; send, check and the API know it', async () => {
    ({ child: server, base } = await startCopy(copy, env));
    const port = new URL(base).port;

    const send = await run([TSX, 'src/main.ts', 'send', 'linear', 'Issue.create'], copy, { ...env, PORT: port });
    expect(send.code, send.stderr).toBe(0);

    const body = JSON.stringify({ type: 'Comment', action: 'create', webhookTimestamp: Date.now(), data: { id: 'c1', body: 'hi' } });
    const headers = linearDelivery(body);
    const first = await fetch(`${base}/webhooks/linear`, { method: 'POST', headers, body });
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ received: true, duplicate: false });
    const again = await fetch(`${base}/webhooks/linear`, { method: 'POST', headers, body });
    expect(await again.json()).toMatchObject({ received: true, duplicate: true });

    const tampered = await fetch(`${base}/webhooks/linear`, { method: 'POST', headers, body: body.replace('hi', 'ho') });
    expect([tampered.status, ((await tampered.json()) as { error: { code: string } }).error.code]).toEqual([400, 'invalid_signature']);
    const staleBody = JSON.stringify({ type: 'Comment', action: 'create', webhookTimestamp: Date.now() - 10 * 60_000, data: {} });
    const stale = await fetch(`${base}/webhooks/linear`, { method: 'POST', headers: linearDelivery(staleBody), body: staleBody });
    expect([stale.status, ((await stale.json()) as { error: { code: string } }).error.code]).toEqual([400, 'timestamp_out_of_tolerance']);
    const unsigned = await fetch(`${base}/webhooks/linear`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect([unsigned.status, ((await unsigned.json()) as { error: { code: string } }).error.code]).toEqual([400, 'missing_signature']);

    const auth = { headers: { authorization: `Bearer ${SECRETS.admin}` } };
    const listed = (await (await fetch(`${base}/api/events?source=linear`, auth)).json()) as { events: Array<{ type: string }> };
    expect(listed.events.map((e) => e.type).sort()).toEqual(['Comment.create', 'Issue.create']);
    const openapi = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(openapi.paths)).toContain('/webhooks/linear');

    const check = await run([TSX, 'src/main.ts', 'check'], copy, env);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toMatch(/\/webhooks\/linear\s+Linear: LINEAR_WEBHOOK_SECRET/);
  });

  it('without its secret the route answers 503 not_configured, like the shipped ones', async () => {
    server?.kill('SIGTERM');
    await new Promise((resolve) => server!.once('exit', resolve));
    const { LINEAR_WEBHOOK_SECRET: _unset, ...withoutSecret } = env;
    const started = await startCopy(copy, withoutSecret);
    server = started.child;
    const body = JSON.stringify({ type: 'Issue', action: 'create', webhookTimestamp: Date.now(), data: {} });
    const answer = await fetch(`${started.base}/webhooks/linear`, { method: 'POST', headers: linearDelivery(body), body });
    const error = ((await answer.json()) as { error: { code: string; message: string } }).error;
    expect([answer.status, error.code]).toEqual([503, 'not_configured']);
    expect(error.message).toContain('LINEAR_WEBHOOK_SECRET');
  });
});
