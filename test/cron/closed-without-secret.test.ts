import { serve } from '@hono/node-server';
import type { Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { checkConfig } from '../../src/cli/check.js';
import { loadConfig } from '../../src/config/config.js';
import { ConfigError } from '../../src/errors.js';
import { testConfig } from '../helpers/config.js';
import { pgliteOnly, useTestDatabase } from '../helpers/db.js';
import { allRuns, createHarness } from './support.js';

/**
 * The request nginx sends upstream for `proxy_pass http://127.0.0.1:<port>;`
 * and nothing else configured: HTTP/1.0, `Connection: close`, `Host` set to
 * the upstream's name, the client's own headers, and no `X-Forwarded-For`,
 * `Forwarded` or `Via`. It arrives from loopback whoever the client is.
 */
function bareNginxRequest(port: number, path: string): Promise<{ status: number; body: string }> {
  const request = [
    `POST ${path} HTTP/1.0`,
    `Host: 127.0.0.1:${port}`,
    'Connection: close',
    'Content-Length: 0',
    'User-Agent: curl/8.5.0',
    'Accept: */*',
    '',
    '',
  ].join('\r\n');
  return new Promise((resolve, reject) => {
    // write, not end: nginx keeps its side open until the answer (a half-close would make Node drop the request).
    const socket = connect({ host: '127.0.0.1', port }, () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer from hookrun in 10 s')));
    socket.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = raw.split('\r\n\r\n', 2);
      resolve({ status: Number(/^HTTP\/1\.\d (\d{3})/.exec(head)?.[1]), body });
    });
  });
}

describe.each(pgliteOnly())('/cron without CRON_SECRET on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  let server: Server | undefined;

  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    server = undefined;
  });

  /** The real app on a real loopback socket, as `hookrun start` serves it. */
  async function serveOpen(env: Record<string, string>): Promise<number> {
    const open = await createHarness(testDb.db, { env: { CRON_SECRET: '', ...env } });
    server = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: open.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server)) as Server;
    });
    return (server.address() as AddressInfo).port;
  }

  it('behind a bare nginx proxy_pass (loopback, HTTP/1.0, Host rewritten, no forwarded headers): 403 naming what to set, the job not run', async () => {
    const port = await serveOpen({});
    const res = await bareNginxRequest(port, '/cron/keep-alive');
    expect(res.status).toBe(403);
    const { error } = JSON.parse(res.body) as { error: { code: string; message: string } };
    expect(error.code).toBe('forbidden');
    expect(error.message).toContain('Set CRON_SECRET');
    expect(error.message).toContain('CRON_LOCAL_CALLERS=allow');
    expect(await allRuns(testDb.db)).toHaveLength(0);
  });

  it('an unknown job is refused the same way: no 404 that tells a stranger which names exist', async () => {
    const res = await bareNginxRequest(await serveOpen({}), '/cron/no-such-job');
    expect(res.status).toBe(403);
  });

  it('CRON_LOCAL_CALLERS=allow (the operator says no proxy is in front): the same loopback request runs the job', async () => {
    const res = await bareNginxRequest(await serveOpen({ CRON_LOCAL_CALLERS: 'allow' }), '/cron/keep-alive');
    expect(res).toEqual({ status: 200, body: 'OK' });
    expect(await allRuns(testDb.db)).toMatchObject([{ job: 'keep-alive', status: 'succeeded' }]);
  });
});

describe('CRON_LOCAL_CALLERS and what start-up says', () => {
  it('refuses a value other than allow or refuse, naming both', () => {
    const read = () => loadConfig({ PLATFORM_CONFIG: '/nonexistent/platform.json', CRON_LOCAL_CALLERS: 'yes' });
    expect(read).toThrow(ConfigError);
    expect(read).toThrow(/CRON_LOCAL_CALLERS="yes" is not valid: use "allow" .* or "refuse"/);
  });

  it('hookrun check says /cron is closed without CRON_SECRET, and what to set', async () => {
    const closed = await checkConfig(testConfig({ CRON_SECRET: '' }));
    expect(closed.warnings).toContainEqual(expect.stringMatching(/CRON_SECRET is not set: \/cron\/\* is closed.*CRON_LOCAL_CALLERS=allow/));
    const local = await checkConfig(testConfig({ CRON_SECRET: '', CRON_LOCAL_CALLERS: 'allow' }));
    expect(local.warnings).toContainEqual(expect.stringMatching(/only callers on this machine.*Behind a reverse proxy that is anyone: set CRON_SECRET/));
  });
});
