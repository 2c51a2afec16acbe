import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Stripe from 'stripe';
import { afterAll, describe, expect, it } from 'vitest';
import { SECRETS } from '../helpers/config.js';
import { TEST_NODE_FLAGS } from '../helpers/spawn-hookrun.js';

/** A first start makes the data dir (PostgreSQL's initdb, in WebAssembly) under npm and tsx: on a busy machine 30 s was not enough. */
const START_TIMEOUT_MS = 90_000;

/** Wait for the JSON log line that announces the URL, with a deadline. */
function waitForUrl(child: ChildProcess, output: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening" line within ${START_TIMEOUT_MS} ms:\n${output.join('')}`)), START_TIMEOUT_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      output.push(chunk.toString());
      const match = /hookrun listening on (http:\/\/\S+?)"/.exec(output.join(''));
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!.replace('[::]', '127.0.0.1').replace('0.0.0.0', '127.0.0.1'));
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.once('exit', (code) => reject(new Error(`exited with ${code} before listening:\n${output.join('')}`)));
  });
}

function spawnHookrun(command: string, args: string[], dataDir: string): ChildProcess {
  return spawn(command, args, {
    env: {
      ...process.env,
      PORT: '0',
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      PAYMENTS_WEBHOOK_SECRET: SECRETS.payments,
      LOG_LEVEL: 'info',
      SCHEDULER: 'off',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** Resolves when every process holding the child's stdout (npm, sh, node) has let go of it, bounded. */
function outputClosed(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`stdout still open ${START_TIMEOUT_MS} ms after SIGTERM`)), START_TIMEOUT_MS);
    child.stdout!.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

const stripePayload = JSON.stringify({
  id: 'evt_spawned_1',
  object: 'event',
  type: 'invoice.paid',
  created: Math.floor(Date.now() / 1000),
  data: { object: {} },
});
const postStripe = (url: string) =>
  fetch(`${url}/webhooks/payments`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: stripePayload, secret: SECRETS.payments }),
    },
    body: stripePayload,
  });

describe('npm start (the real process, embedded database)', { timeout: START_TIMEOUT_MS + 30_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hookrun-start-'));
  const children: ChildProcess[] = [];

  afterAll(async () => {
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) {
        process.kill(-child.pid!, 'SIGKILL');
        await exitOf(child);
      }
    }
  });

  it('serves /health, /ready and stores a Stripe-signed event, then stops cleanly on SIGTERM', async () => {
    const output: string[] = [];
    const child = spawnHookrun('npm', ['start', '--silent'], dataDir);
    children.push(child);
    const url = await waitForUrl(child, output);
    expect((await fetch(`${url}/health`)).status).toBe(200);
    expect(await (await fetch(`${url}/ready`)).json()).toEqual({ status: 'ready', database: 'pglite' });
    const first = await postStripe(url);
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ received: true, duplicate: false });
    expect(await (await postStripe(url)).json()).toMatchObject({ received: true, duplicate: true });
    const closed = (await (await fetch(`${url}/webhooks/auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()) as {
      error: { code: string; message: string };
    };
    expect(closed.error).toMatchObject({ code: 'not_configured', message: expect.stringContaining('then restart hookrun') });

    process.kill(-child.pid!, 'SIGTERM'); // the whole group, as Ctrl-C in a terminal
    // npm exits at once on the signal; hookrun (its grandchild) keeps the pipe open until it has stopped.
    await outputClosed(child);
    const log = output.join('');
    expect(log).toContain('"msg":"stopped"');
    expect(log).not.toContain(SECRETS.payments);
    expect(log).not.toContain('evt_spawned_1');
    // a newcomer without .env is told about every missing secret, and gets a link that opens
    expect(log).toContain('AUTH_WEBHOOK_SECRET is not set: /webhooks/auth answers 503 not_configured until it is set and hookrun restarted.');
    expect(log).toContain('DATABASE_WEBHOOK_SECRET is not set: /webhooks/database answers 503');
    expect(log).not.toContain('PAYMENTS_WEBHOOK_SECRET is not set');
    expect(log).toMatch(/"dashboard":"http:\/\/localhost:\d+\/admin"/);
  });

  it('restarts on the same data dir with the event still there, and exits 0 on SIGTERM', async () => {
    const output: string[] = [];
    const child = spawnHookrun(process.execPath, [...TEST_NODE_FLAGS, 'dist/main.js', 'start'], dataDir);
    children.push(child);
    const url = await waitForUrl(child, output);
    expect(await (await postStripe(url)).json()).toMatchObject({ received: true, duplicate: true });
    child.kill('SIGTERM');
    expect(await exitOf(child)).toBe(0);
  });
});
