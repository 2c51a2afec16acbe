import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SECRETS } from '../helpers/config.js';
import { createPgliteDatabase, type TestDatabase } from '../helpers/db.js';
import { freePort } from '../helpers/free-port.js';
import { createToolsApp } from '../tools/tools-app.js';

/**
 * A reverse proxy on `port` in front of `upstream`, as nginx's default
 * (`proxy_pass http://upstream;`) is: `Host` rewritten to the upstream's,
 * no `X-Forwarded-Host`.
 */
async function hostRewritingProxy(port: number, upstream: number): Promise<Server> {
  const proxy = createServer((req, res) => {
    const out = request(
      { host: '127.0.0.1', port: upstream, method: req.method, path: req.url, headers: { ...req.headers, host: `127.0.0.1:${upstream}` } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.once('error', () => res.writeHead(502).end());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
  return proxy;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

describe('the console behind a proxy that rewrites Host: PUBLIC_URL is the origin its forms come from', () => {
  let testDb: TestDatabase;
  const servers: Server[] = [];
  beforeAll(async () => {
    testDb = await createPgliteDatabase();
  });
  afterEach(async () => {
    for (const server of servers.splice(0)) await close(server);
  });
  afterAll(async () => testDb?.close());

  /** hookrun on loopback behind the proxy; people open the console at the returned origin. */
  async function behindProxy(env: (origin: string) => Record<string, string>): Promise<string> {
    const proxyPort = await freePort();
    const origin = `http://localhost:${proxyPort}`;
    const tools = await createToolsApp(testDb.db, env(origin));
    const app = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: tools.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server)) as Server;
    });
    servers.push(app, await hostRewritingProxy(proxyPort, (app.address() as AddressInfo).port));
    return origin;
  }

  /** The login form posted as a browser on `origin` posts it: through the proxy, with that Origin. */
  const logIn = (origin: string, from = origin) =>
    fetch(`${origin}/admin/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { origin: from, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: SECRETS.admin }).toString(),
    });

  it('without PUBLIC_URL the post is refused with a page that names PUBLIC_URL as the fix', async () => {
    const origin = await behindProxy(() => ({}));
    const res = await logIn(origin);
    expect(res.status).toBe(403);
    const text = await res.text();
    expect(text).toContain('Cross-site form posts are refused');
    expect(text).toContain('set PUBLIC_URL to the origin you open the console at');
  });

  it('with PUBLIC_URL set to that origin: login and the forms behind it work; another origin is still refused', async () => {
    const origin = await behindProxy((public_) => ({ PUBLIC_URL: public_ }));
    const login = await logIn(origin);
    expect(login.status).toBe(303);
    expect(login.headers.get('location')).toBe('/admin');
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;

    const page = await (await fetch(`${origin}/admin`, { headers: { cookie } })).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
    const out = await fetch(`${origin}/admin/logout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { origin, cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf }).toString(),
    });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/admin/login');

    const forged = await logIn(origin, 'https://evil.example');
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain('Cross-site form posts are refused');
  });
});
