import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgliteDatabase, type TestDatabase } from '../helpers/db.js';
import { createToolsApp, type ToolsApp } from './tools-app.js';

const METRICS_TOKEN = 'metrics-token-for-tests-32-characters';

/** This machine's first non-loopback IPv4 address: a caller that is not "on this machine" for the server. */
function externalAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const entry of list ?? []) if (entry.family === 'IPv4' && !entry.internal) return entry.address;
  }
  return undefined;
}

/** The app on a real socket on every interface, so the server sees the caller's real address. */
async function listen(tools: ToolsApp): Promise<{ server: Server; port: number }> {
  const server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch: tools.app.fetch, port: 0, hostname: '0.0.0.0' }, () => resolve(s as Server)) as Server;
  });
  return { server, port: (server.address() as AddressInfo).port };
}

async function close(server: Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/** GET over node:http, which sends the Host given (fetch keeps the URL's): a page whose own name was made to resolve to 127.0.0.1. */
function getWithHost(port: number, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/metrics', headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.once('error', reject).end();
  });
}

const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;

describe('GET /metrics is closed by default: METRICS_TOKEN, or unset, callers on this machine only', () => {
  let testDb: TestDatabase;
  let open: { server: Server; port: number } | undefined;
  let secured: { server: Server; port: number } | undefined;
  let openApp: ToolsApp;
  beforeAll(async () => {
    testDb = await createPgliteDatabase();
    openApp = await createToolsApp(testDb.db, { METRICS_TOKEN: '' });
    open = await listen(openApp);
    secured = await listen(await createToolsApp(testDb.db, { METRICS_TOKEN }));
  });
  afterAll(async () => {
    await close(open?.server);
    await close(secured?.server);
    await testDb?.close();
  });

  it('unset: a loopback caller (Prometheus or curl on this machine) is served', async () => {
    const res = await fetch(`http://127.0.0.1:${open!.port}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('hookrun_events_received_total');
  });

  it('unset: a caller from another machine gets 403 forbidden saying to set METRICS_TOKEN, even claiming loopback in proxy headers', async ({ skip }) => {
    const external = externalAddress();
    if (!external) skip('no non-loopback interface on this machine');
    for (const headers of [{}, { 'x-forwarded-for': '127.0.0.1', forwarded: 'for=127.0.0.1' }] as Array<Record<string, string>>) {
      const res = await fetch(`http://${external}:${open!.port}/metrics`, { headers });
      expect(res.status).toBe(403);
      const error = await errorOf(res);
      expect(error.code).toBe('forbidden');
      expect(error.message).toContain('from another machine');
      expect(error.message).toContain('Set METRICS_TOKEN');
    }
  });

  it('unset: no socket at all (hookrun/next, app.request) is not this machine: 403', async () => {
    const res = await openApp.app.request('/metrics');
    expect(res.status).toBe(403);
    expect((await errorOf(res)).message).toContain('Set METRICS_TOKEN');
  });

  it.each<Record<string, string>>([
    { 'x-forwarded-for': '203.0.113.9' },
    { 'x-real-ip': '203.0.113.9' },
    { forwarded: 'for=203.0.113.9' },
    { via: '1.1 nginx' },
  ])('unset: a loopback request a same-host proxy passed on (%j) gets 403: the proxy relays anyone', async (headers) => {
    const res = await fetch(`http://127.0.0.1:${open!.port}/metrics`, { headers });
    expect(res.status).toBe(403);
    const error = await errorOf(res);
    expect(error.code).toBe('forbidden');
    expect(error.message).toContain('through a proxy');
    expect(error.message).toContain('Set METRICS_TOKEN');
  });

  it.each<Record<string, string>>([{ origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }])(
    'unset: a loopback request a cross-site web page sent (%j) gets 403',
    async (headers) => {
      const res = await fetch(`http://127.0.0.1:${open!.port}/metrics`, { headers });
      expect(res.status).toBe(403);
      expect((await errorOf(res)).message).toContain('web page');
    },
  );

  it('unset: a loopback request naming a foreign host (DNS rebinding) gets 403; one naming localhost is served', async () => {
    const rebound = await getWithHost(open!.port, 'rebound.evil.example');
    expect(rebound.status).toBe(403);
    expect(rebound.body).toContain('DNS rebinding');
    expect((await getWithHost(open!.port, `localhost:${open!.port}`)).status).toBe(200);
  });

  it('set: the loopback rule does not apply; the bearer is needed from anywhere (401 without it)', async () => {
    const refused = await fetch(`http://127.0.0.1:${secured!.port}/metrics`);
    expect(refused.status).toBe(401);
    expect((await errorOf(refused)).message).toContain('Authorization: Bearer <METRICS_TOKEN>');
    const served = await fetch(`http://127.0.0.1:${secured!.port}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}`, 'x-forwarded-for': '203.0.113.9' },
    });
    expect(served.status).toBe(200);
  });
});
