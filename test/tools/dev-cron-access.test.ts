import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReloader, type Reloader } from '../../src/dev/reloader.js';
import { silentLogger } from '../../src/log.js';
import { freePort } from '../helpers/free-port.js';
import { REPO_ROOT, baseEnv, seedDataDir } from '../helpers/spawn-hookrun.js';

/** GET `url` from a given local address (127.0.0.2 is this machine, but not the loopback the dev front trusts): the status. */
function statusFrom(localAddress: string, url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', reject);
    req.end();
  });
}

/**
 * `hookrun dev` without CRON_SECRET: its front names a caller from another
 * machine in Forwarded and its `start` child hears only the front, so the child
 * serves loopback callers (CRON_LOCAL_CALLERS=allow) where `hookrun start`
 * alone keeps /cron closed.
 */
describe('hookrun dev without CRON_SECRET', { timeout: 120_000 }, () => {
  let dataDir = '';
  let dev: Reloader | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'hookrun-dev-cron-'));
    await seedDataDir(dataDir);
    const { CRON_SECRET: _unset, ...env } = baseEnv();
    dev = await startReloader({
      port: await freePort(),
      host: '127.0.0.1',
      watch: [],
      command: { file: join(REPO_ROOT, 'dist', 'main.js'), args: ['start', '--no-scheduler'] },
      env: { ...env, DATA_DIR: dataDir, PLATFORM_CONFIG: join(dataDir, 'platform.json'), LOG_LEVEL: 'warn' },
      log: silentLogger,
    });
  }, 90_000);

  afterAll(async () => {
    await dev?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('a curl on this machine runs the job; the same call through a proxy is still refused', async () => {
    const ran = await fetch(`${dev!.url}/cron/keep-alive`, { method: 'POST' });
    expect(ran.status).toBe(200);
    expect(await ran.text()).toBe('OK');
    const proxied = await fetch(`${dev!.url}/cron/keep-alive`, { method: 'POST', headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(proxied.status).toBe(403);
    expect(((await proxied.json()) as { error: { message: string } }).error.message).toContain('came through a proxy');
  });

  it('a caller from another address is named to the child as forwarded, so /metrics without METRICS_TOKEN and /cron without CRON_SECRET refuse it', async () => {
    expect(await statusFrom('127.0.0.1', `${dev!.url}/metrics`)).toBe(200);
    expect(await statusFrom('127.0.0.2', `${dev!.url}/metrics`)).toBe(403);
    expect(await statusFrom('127.0.0.2', `${dev!.url}/cron/keep-alive`)).toBe(403);
  });
});
