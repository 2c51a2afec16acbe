import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRETS } from '../helpers/config.js';
import { reportFigures } from '../helpers/figures.js';
import { inboxCounts, withDatabase } from '../helpers/inspect-db.js';
import { assertNoSecretLeaks, recordResponse, secretHits } from '../helpers/secret-scan.js';
import { checkoutCompleted, sendDelivery } from '../helpers/signed-deliveries.js';
import { seedDataDir, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';

/** This machine's first non-loopback IPv4 address: a caller that is not "on this machine" for the server. */
function externalAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const entry of list ?? []) if (entry.family === 'IPv4' && !entry.internal) return entry.address;
  }
  return undefined;
}

let requests = 0;
/** One request over HTTP (never following a redirect), from a chosen loopback address; the response is recorded for the secret scan. */
async function call(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | URLSearchParams; from?: string } = {},
): Promise<{ status: number; body: string; headers: Headers }> {
  requests++;
  const { status, body, headers } = await new Promise<{ status: number; body: string; headers: Headers }>((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers: init.headers, localAddress: init.from, agent: false, timeout: 10_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) for (const one of [value ?? []].flat()) headers.append(name, one);
        resolve({ status: res.statusCode!, body: text, headers });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} in 10 s`)));
    req.on('error', reject);
    req.end(init.body?.toString());
  });
  recordResponse(`${init.method ?? 'GET'} ${new URL(url).pathname}`, status, headers, body);
  return { status, body, headers };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const WRONG_TOKENS: Array<Record<string, string>> = [
  {},
  { authorization: '' },
  { authorization: 'Bearer' },
  bearer('wrong'),
  bearer(`${SECRETS.admin}x`),
  bearer(SECRETS.admin.slice(0, -1)),
  { authorization: `Basic ${Buffer.from(`admin:${SECRETS.admin}`).toString('base64')}` },
  { authorization: SECRETS.admin },
];

const ADMIN_ROUTES: Array<[string, string]> = [
  ['GET', '/api/events'],
  ['GET', '/api/events/1'],
  ['GET', '/api/events/counts'],
  ['POST', '/api/events/replay'],
  ['POST', '/api/events/1/replay'],
  ['GET', '/api/cron/jobs'],
  ['GET', '/api/cron/runs'],
  ['POST', '/api/cron/jobs/keep-alive/run'],
];

// Guarantee 5: cron routes, the admin API and the dashboard fail closed; no secret leaves the process.
describe('nothing let in (spawned hookrun)', () => {
  const external = externalAddress();
  let dataDirs: string[] = [];
  let secured: HookrunProcess;
  let open: HookrunProcess;
  const at = (proc: HookrunProcess, host: string) => proc.url.replace('0.0.0.0', host);

  beforeAll(async () => {
    dataDirs = await Promise.all([mkdtemp(join(tmpdir(), 'hookrun-rel-closed-a-')), mkdtemp(join(tmpdir(), 'hookrun-rel-closed-b-'))]);
    await Promise.all(dataDirs.map(seedDataDir));
    [secured, open] = await Promise.all([
      spawnHookrun({ dataDir: dataDirs[0], env: { HOST: '0.0.0.0', SCHEDULER: 'off', LOG_LEVEL: 'debug' } }),
      // Nothing configured: no CRON_SECRET, no ADMIN_TOKEN, no payments secret.
      spawnHookrun({
        dataDir: dataDirs[1],
        env: { HOST: '0.0.0.0', SCHEDULER: 'off', LOG_LEVEL: 'debug', CRON_SECRET: undefined, ADMIN_TOKEN: undefined, PAYMENTS_WEBHOOK_SECRET: undefined },
      }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([secured?.stop(10_000), open?.stop(10_000)]);
    const scan = assertNoSecretLeaks();
    reportFigures('5 nothing let in', { requests, secretScan: scan, externalAddress: external ?? 'none' });
    await Promise.all(dataDirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  /** A wrong credential: 401, or 429 once this address sent ten in a minute (then every credential from it is refused unchecked). */
  const REFUSED = [401, 429];

  it('cron routes with CRON_SECRET: a missing or wrong bearer is 401 from anywhere (even for an unknown job); the right one runs the job', async () => {
    const hosts = ['127.0.0.1', ...(external ? [external] : [])];
    for (const host of hosts) {
      const from = host === '127.0.0.1' ? '127.0.0.11' : undefined;
      // The right one first: past ten wrong ones the address is refused unchecked, the right one too.
      for (const method of ['GET', 'POST']) {
        const ok = await call(`${at(secured, host)}/cron/keep-alive`, { method, headers: bearer(SECRETS.cron), from });
        expect(ok).toMatchObject({ status: 200, body: 'OK' });
      }
      for (const method of ['GET', 'POST']) {
        for (const headers of [...WRONG_TOKENS, bearer(SECRETS.admin), bearer(SECRETS.payments)]) {
          const res = await call(`${at(secured, host)}/cron/keep-alive`, { method, headers, from });
          expect(REFUSED, `${method} ${host} ${JSON.stringify(headers)}`).toContain(res.status);
        }
        expect(REFUSED).toContain((await call(`${at(secured, host)}/cron/no-such-job`, { method, from })).status);
      }
    }
  });

  it('cron routes without CRON_SECRET: closed, even to loopback (a proxy on this machine looks the same); a spoofed X-Forwarded-For does not help', async ({
    skip,
  }) => {
    const local = await call(`${at(open, '127.0.0.1')}/cron/keep-alive`, { method: 'POST' });
    expect(local.status).toBe(403);
    expect(JSON.parse(local.body).error.message).toMatch(/Set CRON_SECRET .* CRON_LOCAL_CALLERS=allow/);
    expect(open.output()).toContain('CRON_SECRET is not set: /cron/* is closed');
    if (!external) skip('no non-loopback interface on this machine');
    const attempts: Array<Record<string, string>> = [
      {},
      bearer('anything'),
      { 'x-forwarded-for': '127.0.0.1', 'x-real-ip': '127.0.0.1', forwarded: 'for=127.0.0.1' },
    ];
    for (const headers of attempts) {
      const res = await call(`${at(open, external!)}/cron/keep-alive`, { method: 'POST', headers });
      expect(res.status).toBe(403);
      expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'forbidden' } });
    }
  });

  it('admin API: 401 for every route without the right bearer; 503 on every route when ADMIN_TOKEN is unset', async () => {
    for (const [method, path] of ADMIN_ROUTES) {
      for (const headers of [...WRONG_TOKENS, bearer(SECRETS.cron)]) {
        const res = await call(`${at(secured, '127.0.0.1')}${path}`, { method, headers, from: '127.0.0.12' });
        expect(REFUSED, `${method} ${path} ${JSON.stringify(headers)}`).toContain(res.status);
        expect(['unauthorized', 'too_many_requests']).toContain(JSON.parse(res.body).error.code);
      }
      for (const headers of [{}, bearer(SECRETS.admin), bearer('')]) {
        const res = await call(`${at(open, '127.0.0.1')}${path}`, { method, headers });
        expect(res.status, `${method} ${path} unset`).toBe(503);
        expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'not_configured' } });
      }
    }
    const ok = await call(`${at(secured, '127.0.0.1')}/api/events`, { headers: bearer(SECRETS.admin), from: '127.0.0.13' }); // not the guessing address
    expect((await call(`${at(secured, '127.0.0.1')}/api/events`, { headers: bearer(SECRETS.admin), from: '127.0.0.12' })).status).toBe(429);
    expect(ok.status).toBe(200);
  });

  it('dashboard: no session → login; forged or wrong credentials never get in; unset ADMIN_TOKEN → 503', async () => {
    const base = at(secured, '127.0.0.1');
    const forged = [`${Math.floor(Date.now() / 1000) + 3600}.${'A'.repeat(43)}`, '9999999999.x', SECRETS.admin, ''];
    for (const path of ['/admin', '/admin/', '/admin/events/1']) {
      expect((await call(`${base}${path}`)).status).toBe(303);
      for (const cookie of forged) {
        const res = await call(`${base}${path}`, { headers: { cookie: `hookrun_admin=${cookie}; hookrun_session=${cookie}` } });
        expect(res.status).toBe(303);
        expect(res.headers.get('location')).toMatch(/\/admin\/login$/);
      }
    }
    for (const token of ['', 'wrong', SECRETS.cron, `${SECRETS.admin} `.trim() + 'x']) {
      const res = await call(`${base}/admin/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    // State-changing posts without a session do nothing.
    for (const path of ['/admin/events/replay', '/admin/events/1/replay', '/admin/logout']) {
      const res = await call(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
        body: 'status=dead',
      });
      expect([303, 403]).toContain(res.status);
    }
    // The right token gets a session, and the page it opens does not contain the token.
    const login = await call(`${base}/admin/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: SECRETS.admin }),
    });
    expect(login.status).toBe(303);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const page = await call(`${base}/admin`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(secretHits(page.body)).toEqual([]);

    for (const [method, path] of [
      ['GET', '/admin'],
      ['GET', '/admin/login'],
      ['POST', '/admin/login'],
    ] as const) {
      expect(
        (
          await call(`${at(open, '127.0.0.1')}${path}`, {
            method,
            body: method === 'POST' ? 'token=x' : undefined,
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
          })
        ).status,
      ).toBe(503);
    }
  });

  it('a receiver without its secret answers 503 not_configured and stores nothing', async () => {
    const res = await sendDelivery(at(open, '127.0.0.1'), checkoutCompleted(`closed${Date.now()}`));
    expect(res).toMatchObject({ status: 503 });
    expect(JSON.parse((res as { body: string }).body)).toMatchObject({ error: { code: 'not_configured' } });
    await open.stop(10_000);
    expect((await withDatabase({ dataDir: dataDirs[1] }, inboxCounts)).rows).toBe(0);
  });

  // Secrets are compared in constant time: eslint.config.js's no-restricted-syntax rule flags === / !== on them in src/.
  it('the secret scan finds a planted leak in every form it looks for (so a clean scan means something)', () => {
    for (const secret of Object.values(SECRETS)) expect(secretHits(`log line with ${secret} inside`)).not.toEqual([]);
    const authKey = SECRETS.auth.slice('whsec_'.length);
    expect(secretHits(`{"key":"${authKey}"}`)).not.toEqual([]);
    expect(secretHits(Buffer.from(authKey, 'base64').toString('hex'))).not.toEqual([]);
  });
});
