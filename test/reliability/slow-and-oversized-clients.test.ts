import { connect, type Socket } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportFigures } from '../helpers/figures.js';
import { assertNoSecretLeaks, recordCapture } from '../helpers/secret-scan.js';
import { seedDataDir, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';

/** service.ts: HEADERS_TIMEOUT_MS 10 s, KEEP_ALIVE_TIMEOUT_MS 5 s, REQUEST_TIMEOUT_MS 15 s. */
const HEADERS_TIMEOUT_MS = 10_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** Node checks header/request time-outs on an interval; the slack allowed on top of a time-out. */
const CHECK_SLACK_MS = 5_000;
const DRIP_EVERY_MS = 500;

interface RawConnection {
  socket: Socket;
  received(): string;
  /** Resolves with ms since open when the server closes the socket (or `limitMs` passes: Infinity). */
  closed(limitMs: number): Promise<number>;
}

function openRaw(url: string): Promise<RawConnection> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const openedAt = Date.now();
    let data = '';
    let closedAt: number | undefined;
    const waiters: Array<() => void> = [];
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
      recordCapture('raw socket', chunk.toString('latin1'));
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closedAt = Date.now();
      for (const w of waiters) w();
    });
    socket.once('connect', () =>
      resolve({
        socket,
        received: () => data,
        closed: (limitMs) =>
          new Promise((done) => {
            if (closedAt !== undefined) return done(closedAt - openedAt);
            const timer = setTimeout(() => done(Infinity), limitMs);
            waiters.push(() => {
              clearTimeout(timer);
              done(closedAt! - openedAt);
            });
          }),
      }),
    );
    socket.once('error', reject);
  });
}

// Guarantee 4 (server side): slow or oversized clients cannot hold or flood a connection.
describe('slow and oversized clients (spawned hookrun)', () => {
  let dataDir: string;
  let hookrun: HookrunProcess;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'hookrun-rel-slow-'));
    await seedDataDir(dataDir);
    hookrun = await spawnHookrun({ dataDir, env: { SCHEDULER: 'off' } });
  });
  afterAll(async () => {
    await hookrun?.stop(10_000);
    await rm(dataDir, { recursive: true, force: true });
    assertNoSecretLeaks();
  });

  it('refuses oversized headers with 431, drops a header drip (Slowloris) and idle keep-alive connections', { timeout: 60_000 }, async () => {
    // Oversized: 20 KB of headers (Node's limit is 16 KiB).
    const big = await openRaw(hookrun.url);
    big.socket.write(`POST /webhooks/payments HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    const bigClosedMs = await big.closed(10_000);
    expect(big.received()).toMatch(/^HTTP\/1\.1 431 /);

    // Slowloris: headers that never end, one line every 500 ms.
    const slow = await openRaw(hookrun.url);
    slow.socket.write('POST /webhooks/payments HTTP/1.1\r\nHost: x\r\n');
    let lines = 0;
    const drip = setInterval(() => {
      if (!slow.socket.destroyed) slow.socket.write(`X-Drip-${lines++}: ${'b'.repeat(10)}\r\n`);
    }, DRIP_EVERY_MS);

    // Idle keep-alive: one request, then silence.
    const idle = await openRaw(hookrun.url);
    idle.socket.write('GET /health HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');

    const [slowMs, idleMs] = await Promise.all([
      slow.closed(HEADERS_TIMEOUT_MS + CHECK_SLACK_MS + 30_000),
      idle.closed(KEEP_ALIVE_TIMEOUT_MS + CHECK_SLACK_MS + 30_000),
    ]);
    clearInterval(drip);
    slow.socket.destroy();
    idle.socket.destroy();

    expect(idle.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(hookrun.exited).toBeUndefined();
    reportFigures('4 slow and oversized clients', {
      oversizedHeaderStatus: 431,
      oversizedClosedMs: bigClosedMs,
      slowlorisHeldMs: slowMs,
      slowlorisLinesSent: lines,
      idleKeepAliveHeldMs: idleMs,
    });
    expect(slowMs).toBeLessThanOrEqual(HEADERS_TIMEOUT_MS + CHECK_SLACK_MS);
    expect(idleMs).toBeLessThanOrEqual(KEEP_ALIVE_TIMEOUT_MS + CHECK_SLACK_MS);
    // The server still serves others.
    expect((await fetch(`${hookrun.url}/health`)).status).toBe(200);
  });
});
