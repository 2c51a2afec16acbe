import { beforeEach, describe, expect, it } from 'vitest';
import { countPages } from '../../src/db/pages.js';
import { SECRETS } from '../helpers/config.js';
import { pgliteOnly, useTestDatabase } from '../helpers/db.js';
import { allRuns, createHarness, deferred, jobsOf, type CronHarness } from './support.js';
import { loadJobs } from '../../src/cron/registry.js';
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { pollUntil } from '../helpers/poll.js';

const auth = { Authorization: `Bearer ${SECRETS.cron}` };

describe.each(pgliteOnly())('/cron routes on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  let h: CronHarness;
  let gate = deferred();

  beforeEach(async () => {
    gate = deferred();
    const real = await loadJobs();
    h = await createHarness(testDb.db, {
      jobs: new Map([
        ...real,
        ...jobsOf({
          boom: { run: () => Promise.reject(new Error('the report service said no')) },
          slow: { run: () => gate.promise },
        }),
      ]),
    });
  });

  it('POST runs keep-alive: 200 text/plain "OK", one succeeded row, pages empty', async () => {
    const res = await h.app.request('/cron/keep-alive', { method: 'POST', headers: auth });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toBe('OK');
    const runs = await allRuns(testDb.db);
    expect(runs).toMatchObject([{ job: 'keep-alive', trigger: 'http', status: 'succeeded', error: null, scheduledFor: null }]);
    expect(runs[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(runs[0]!.finishedAt).not.toBeNull();
    expect(await countPages(testDb.db)).toBe(0);
    expect(await h.metrics.registry.getSingleMetricAsString('hookrun_cron_runs_total')).toContain(
      'hookrun_cron_runs_total{job="keep-alive",trigger="http",status="succeeded"} 1',
    );
  });

  it('GET (what Vercel Cron sends) runs it too', async () => {
    const res = await h.app.request('/cron/keep-alive', { headers: auth });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('OK');
    expect(await allRuns(testDb.db)).toHaveLength(1);
  });

  it('HEAD does not run the job', async () => {
    const res = await h.app.request('/cron/keep-alive', { method: 'HEAD', headers: auth });
    expect(res.status).toBe(405);
    expect(await allRuns(testDb.db)).toHaveLength(0);
  });

  it('unknown job: 404 in the JSON error contract, nothing recorded', async () => {
    const res = await h.app.request('/cron/nope', { method: 'POST', headers: auth });
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('not_found');
    expect(body.error.message).toContain('No cron job "nope"');
    expect(await allRuns(testDb.db)).toHaveLength(0);
  });

  it('job threw: 500 text naming the run, not its error (which may name internals); the failed row keeps the error', async () => {
    const res = await h.app.request('/cron/boom', { method: 'POST', headers: auth });
    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const runs = await allRuns(testDb.db);
    expect(runs).toMatchObject([{ job: 'boom', status: 'failed', error: 'the report service said no' }]);
    const body = await res.text();
    expect(body).not.toContain('report service');
    expect(body).toBe(`Job failed (run ${runs[0]!.id}); see its error with hookrun cron runs boom, in the dashboard's jobs page, or in the server log.`);
  });

  it('already running: 409 conflict, recorded skipped; the first call still answers OK', async () => {
    const first = h.app.request('/cron/slow', { method: 'POST', headers: auth });
    await pollUntil('a running run', 5000, async () => (await allRuns(testDb.db)).some((r) => r.status === 'running') || undefined, 5);
    const second = await h.app.request('/cron/slow', { method: 'POST', headers: auth });
    expect(second.status).toBe(409);
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe('conflict');
    gate.resolve();
    expect((await first).status).toBe(200);
    const runs = await allRuns(testDb.db);
    expect(runs.map((r) => r.status)).toEqual(['succeeded', 'skipped']);
    expect(runs[1]!.error).toMatch(/already running/);
  });

  it.each([
    ['missing', {}],
    ['wrong', { Authorization: 'Bearer not-the-secret' }],
    ['not bearer', { Authorization: `Basic ${SECRETS.cron}` }],
  ])('CRON_SECRET set, %s token: 401, job not run', async (_label, headers) => {
    const res = await h.app.request('/cron/keep-alive', { method: 'POST', headers });
    expect(res.status).toBe(401);
    const text = await res.text();
    expect(JSON.parse(text).error.code).toBe('unauthorized');
    expect(text).not.toContain(SECRETS.cron);
    expect(await allRuns(testDb.db)).toHaveLength(0);
  });

  it('CRON_SECRET set: an unknown job without a token is 401, not 404 (no job names to strangers)', async () => {
    expect((await h.app.request('/cron/nope', { method: 'POST' })).status).toBe(401);
  });

  describe('CRON_SECRET unset', () => {
    it('refuses even a loopback caller with no proxy headers (a bare proxy_pass looks the same), saying what to set', async () => {
      const open = await createHarness(testDb.db, { env: { CRON_SECRET: '' }, remoteAddress: () => '127.0.0.1' });
      const res = await open.app.request('http://localhost:3002/cron/keep-alive', { method: 'POST' });
      expect(res.status).toBe(403);
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      expect(error).toMatchObject({ code: 'forbidden' });
      expect(error.message).toContain('Set CRON_SECRET');
      expect(error.message).toContain('CRON_LOCAL_CALLERS=allow');
      expect(await allRuns(testDb.db)).toHaveLength(0);
    });
  });

  describe('CRON_SECRET unset, CRON_LOCAL_CALLERS=allow (no proxy in front)', () => {
    const LOCAL = { CRON_SECRET: '', CRON_LOCAL_CALLERS: 'allow' };

    it('refuses callers without a socket address (app.request) with 403', async () => {
      const open = await createHarness(testDb.db, { env: LOCAL });
      const res = await open.app.request('/cron/keep-alive', { method: 'POST' });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain('CRON_SECRET');
      expect(await allRuns(testDb.db)).toHaveLength(0);
    });

    it.each(['127.0.0.1', '::1', '::ffff:127.0.0.1'])('accepts loopback %s', async (address) => {
      const open = await createHarness(testDb.db, { env: LOCAL, remoteAddress: () => address });
      const res = await open.app.request('/cron/keep-alive', { method: 'POST' });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('OK');
    });

    it('serves a real loopback socket (getConnInfo), no token needed', async () => {
      const open = await createHarness(testDb.db, { env: LOCAL });
      const server = await new Promise<Server>((resolve) => {
        const s = serve({ fetch: open.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server)) as Server;
      });
      try {
        const { port } = server.address() as AddressInfo;
        const res = await fetch(`http://127.0.0.1:${port}/cron/keep-alive`, { method: 'POST' });
        expect(res.status).toBe(200);
        expect(await res.text()).toBe('OK');
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it.each([
      [{ origin: 'https://evil.example' }, '/cron/keep-alive'],
      [{ 'sec-fetch-site': 'cross-site' }, '/cron/keep-alive'],
      [{ 'sec-fetch-site': 'same-site' }, '/cron/keep-alive'],
      [{}, 'http://rebound.evil.example/cron/keep-alive'],
    ])('refuses a loopback request a web page sent (%j to %s): cross-site or DNS rebinding', async (headers, url) => {
      const open = await createHarness(testDb.db, { env: LOCAL, remoteAddress: () => '127.0.0.1' });
      const res = await open.app.request(url, { method: 'POST', headers });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain('refuse requests a web page sends');
      expect(await allRuns(testDb.db)).toHaveLength(0);
      const fine = await open.app.request('http://localhost:3002/cron/keep-alive', { method: 'POST', headers: { 'sec-fetch-site': 'none' } });
      expect(fine.status).toBe(200); // typed into the address bar, or curl naming localhost
    });

    it.each<Record<string, string>>([
      { 'x-forwarded-for': '203.0.113.9' },
      { 'x-forwarded-proto': 'https' },
      { 'x-real-ip': '203.0.113.9' },
      { forwarded: 'for=203.0.113.9' },
      { via: '1.1 nginx' },
    ])('refuses a loopback request a same-host proxy passed on (%j), even with Host rewritten to localhost, and says to set CRON_SECRET', async (headers) => {
      const open = await createHarness(testDb.db, { env: LOCAL, remoteAddress: () => '127.0.0.1' });
      const res = await open.app.request('http://localhost:3002/cron/keep-alive', { method: 'POST', headers });
      expect(res.status).toBe(403);
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('forbidden');
      expect(error.message).toContain('through a proxy');
      expect(error.message).toContain('Set CRON_SECRET');
      expect(await allRuns(testDb.db)).toHaveLength(0);
    });

    it('a 404 for an unknown job does not list the job names to a caller without CRON_SECRET; a CRON_SECRET holder gets them', async () => {
      const open = await createHarness(testDb.db, { env: LOCAL, remoteAddress: () => '127.0.0.1' });
      const anonymous = await open.app.request('http://localhost:3002/cron/nope', { method: 'POST' });
      expect(anonymous.status).toBe(404);
      const message = ((await anonymous.json()) as { error: { message: string } }).error.message;
      expect(message).toContain('No cron job "nope"');
      expect(message).not.toContain('keep-alive');
      const holder = await h.app.request('/cron/nope', { method: 'POST', headers: auth });
      expect(holder.status).toBe(404);
      expect(((await holder.json()) as { error: { message: string } }).error.message).toContain('keep-alive');
    });

    it.each(['10.0.0.7', '::ffff:192.168.1.2', '2001:db8::1'])('refuses non-loopback %s', async (address) => {
      const open = await createHarness(testDb.db, { env: LOCAL, remoteAddress: () => address });
      expect((await open.app.request('/cron/keep-alive', { method: 'POST' })).status).toBe(403);
    });
  });
});
