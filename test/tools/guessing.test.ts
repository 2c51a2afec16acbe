import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import type { Config } from '../../src/config/config.js';
import { createCronService } from '../../src/cron/cron-service.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { buildApp } from '../../src/http/build-app.js';
import { MAX_FAILURES_PER_ADDRESS, MAX_GLOBAL_FAILURES } from '../../src/http/credential-throttle.js';
import { Metrics } from '../../src/metrics.js';
import { SECRETS, testConfig } from '../helpers/config.js';
import { createPgliteDatabase, type TestDatabase } from '../helpers/db.js';
import { TEST_JOBS } from './tools-app.js';

const METRICS_TOKEN = 'metrics-token-for-tests-32-characters';
const FAILURE_LINE = 'authentication failed: wrong or missing credential';

interface Answer {
  status: number;
  retryAfter: number | undefined;
  text: string;
}

/** One request over real HTTP from a chosen loopback address (all of 127.0.0.0/8 is this machine's), a fresh connection each. */
function send(port: number, from: string, path: string, options: { method?: string; token?: string; form?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', localAddress: from, agent: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        const retryAfter = res.headers['retry-after'];
        resolve({ status: res.statusCode!, retryAfter: retryAfter === undefined ? undefined : Number(retryAfter), text });
      });
    });
    req.on('error', reject);
    req.end(options.form);
  });
}

const login = (port: number, from: string, token: string) =>
  send(port, from, '/admin/login', { method: 'POST', form: new URLSearchParams({ token }).toString() });

describe('guessing a credential is expensive: a blocked address is refused before its credential is compared', () => {
  let testDb: TestDatabase;
  beforeAll(async () => {
    testDb = await createPgliteDatabase();
  });
  afterAll(async () => testDb?.close());

  /** The whole app as service.ts builds it, listening on a loopback port, with a test clock and a log whose lines the test reads. */
  async function serveApp() {
    const lines: Array<{ msg: string; suppressed?: number }> = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const config: Config = { ...testConfig({ METRICS_TOKEN }), crons: [{ path: '/cron/tick', schedule: '0 1 * * *' }] };
    const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
    const metrics = new Metrics();
    const cron = await createCronService({ config, db: testDb.db, log, metrics, clock, jobs: TEST_JOBS });
    const { app } = buildApp({ config, db: testDb.db, clock, log, metrics, writer: new EventWriter(testDb.db), cron });
    const server = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server)) as Server;
    });
    onTestFinished(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
    /** Wrong credentials compared, as the log counts them: a line each, or counted as left out on the next line. */
    const compared = () => lines.filter((l) => l.msg === FAILURE_LINE).reduce((sum, l) => sum + 1 + (l.suppressed ?? 0), 0);
    return { port: (server.address() as AddressInfo).port, clock, compared };
  }

  it.each([
    { route: '/api/events', method: 'GET', right: SECRETS.admin },
    { route: '/cron/tick', method: 'POST', right: SECRETS.cron },
    { route: '/metrics', method: 'GET', right: METRICS_TOKEN },
  ])('$route: after 10 wrong bearers the right one from that address gets the same 429 as a wrong one', async ({ route, method, right }) => {
    const { port } = await serveApp();
    const from = '127.0.1.1';
    for (let i = 0; i < MAX_FAILURES_PER_ADDRESS; i++) expect((await send(port, from, route, { method, token: `wrong-${i}` })).status).toBe(401);
    const wrong = await send(port, from, route, { method, token: 'wrong-again' });
    const rightOne = await send(port, from, route, { method, token: right });
    expect(rightOne).toEqual(wrong);
    expect(rightOne.status).toBe(429);
    expect(rightOne.retryAfter).toBe(60);
    expect(JSON.parse(rightOne.text).error.code).toBe('too_many_requests');
    expect((await send(port, '127.0.1.2', route, { method, token: right })).status).toBe(200); // another address is not blocked
  });

  it('a flood of 300 wrong bearers at once from one address has 10 of them compared; the rest are 429 unchecked', async () => {
    const { port, clock, compared } = await serveApp();
    const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => send(port, '127.0.2.1', '/api/events', { token: `guess-${i}` })));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(MAX_FAILURES_PER_ADDRESS);
    expect(statuses.filter((s) => s === 429)).toHaveLength(300 - MAX_FAILURES_PER_ADDRESS);
    clock.advance(60_000 * 60 * 2); // a new log window, so a line reports any left out
    expect((await send(port, '127.0.2.2', '/api/events', { token: 'one-more' })).status).toBe(401);
    expect(compared()).toBe(MAX_FAILURES_PER_ADDRESS + 1);
  });

  it('a steady flood (a guess every 5 s for 30 minutes) is blocked for 1, 2, 4, 8, then 15 minutes: 50 guesses compared instead of 300', async () => {
    const { port, clock } = await serveApp();
    const retryAfters: number[] = [];
    let compared = 0;
    for (let second = 0; second < 30 * 60; second += 5) {
      const answer = await send(port, '127.0.3.1', '/cron/tick', { method: 'POST', token: `guess-${second}` });
      if (answer.status === 401) compared++;
      else if (retryAfters.length === 0 || answer.retryAfter! > retryAfters.at(-1)!) retryAfters.push(answer.retryAfter!);
      clock.advance(5000);
    }
    expect(retryAfters.map((seconds) => seconds + 5)).toEqual([60, 120, 240, 480, 900]); // the first refusal comes 5 s into each block
    expect(compared).toBe(5 * MAX_FAILURES_PER_ADDRESS);
  });

  it('during a global flood the right token from another address gets 200, as does a typo then the right one from an address that used it before', async () => {
    const { port } = await serveApp();
    expect((await send(port, '127.0.4.1', '/api/events', { token: SECRETS.admin })).status).toBe(200); // the admin, before the flood
    for (let i = 0; i < MAX_GLOBAL_FAILURES; i++) {
      expect((await send(port, `127.0.5.${i + 1}`, '/api/events', { token: `flood-${i}` })).status).toBe(401);
    }
    const flooder = await send(port, '127.0.5.1', '/api/events', { token: SECRETS.admin });
    expect([flooder.status, flooder.retryAfter]).toEqual([429, 60]);
    expect(JSON.parse(flooder.text).error.message).toMatch(/from many addresses, and one from yours/);
    expect((await send(port, '127.0.6.1', '/api/events', { token: SECRETS.admin })).status).toBe(200); // never seen: compared
    expect((await send(port, '127.0.4.1', '/api/events', { token: 'typo' })).status).toBe(401);
    expect((await send(port, '127.0.4.1', '/api/events', { token: SECRETS.admin })).status).toBe(200); // trusted: still compared
    expect((await send(port, '127.0.6.2', '/api/events', { token: 'typo' })).status).toBe(401);
    expect((await send(port, '127.0.6.2', '/api/events', { token: SECRETS.admin })).status).toBe(429); // failed, never right: blocked
  });

  it('/admin/login: after 10 wrong tokens the right one from that address gets 429, the block grows, and a guess on /api counts there too', async () => {
    const { port, clock } = await serveApp();
    for (let i = 0; i < MAX_FAILURES_PER_ADDRESS; i++) expect((await login(port, '127.0.7.1', `wrong-${i}`)).status).toBe(401);
    const blocked = await login(port, '127.0.7.1', SECRETS.admin);
    expect([blocked.status, blocked.retryAfter]).toEqual([429, 60]);
    expect(blocked.text).toContain('refused unchecked');
    expect((await login(port, '127.0.7.2', SECRETS.admin)).status).toBe(303);
    clock.advance(60_000);
    for (let i = 0; i < MAX_FAILURES_PER_ADDRESS; i++) expect((await login(port, '127.0.7.1', `wrong-${i}`)).status).toBe(401);
    expect((await login(port, '127.0.7.1', SECRETS.admin)).retryAfter).toBe(120);

    for (let i = 0; i < MAX_FAILURES_PER_ADDRESS; i++) expect((await send(port, '127.0.7.3', '/api/events', { token: `wrong-${i}` })).status).toBe(401);
    expect((await login(port, '127.0.7.3', SECRETS.admin)).status).toBe(429);
  });
});
