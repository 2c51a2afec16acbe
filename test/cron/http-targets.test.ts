import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { CRON_USER_AGENT, withHttpTargets } from '../../src/cron/http-target.js';
import { ConfigError } from '../../src/errors.js';
import type { CronEntry } from '../../src/config/platform-entries.js';
import { SECRETS, testConfig } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { allRuns, createHarness, jobsOf } from './support.js';

/** A job "in another runtime": records each call and answers what the test says. */
interface Target {
  url: string;
  calls: Array<{ method: string; path: string; authorization?: string; userAgent?: string }>;
  answer: number | 'hang';
  close(): Promise<void>;
}

async function startTarget(): Promise<Target> {
  const target: Omit<Target, 'url' | 'close'> = { calls: [], answer: 200 };
  const server: Server = createServer((req: IncomingMessage, res) => {
    target.calls.push({ method: req.method!, path: req.url!, authorization: req.headers.authorization, userAgent: req.headers['user-agent'] });
    if (target.answer === 'hang') return;
    res.writeHead(target.answer).end('done');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    ...target,
    get calls() {
      return target.calls;
    },
    get answer() {
      return target.answer;
    },
    set answer(value) {
      target.answer = value;
    },
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe.each(databaseKinds())('HTTP targets: a job in any runtime, on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  let target: Target;
  beforeEach(async () => {
    target = await startTarget();
  });
  afterEach(() => target.close());

  const entry = (extra: Partial<CronEntry> = {}): CronEntry => ({
    name: 'billing-sync',
    url: `${target.url}/sync?token=query-secret`,
    schedule: '*/5 * * * *',
    ...extra,
  });
  /** The crons as `loadConfig` reads them from a platform.json and the env (tokens resolved from `tokenEnv`). */
  const cronsFrom = (crons: CronEntry[], env: Record<string, string> = {}): CronEntry[] => {
    const dir = mkdtempSync(join(tmpdir(), 'hookrun-targets-'));
    try {
      writeFileSync(join(dir, 'platform.json'), JSON.stringify({ crons }));
      return testConfig({ PLATFORM_CONFIG: join(dir, 'platform.json'), ...env }).crons;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('each tick calls the URL once, with its own token (tokenEnv) and hookrun-cron/<version>, across two instances; never the cron secret', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 23, 10, 4, 59));
    const crons = cronsFrom([entry({ method: 'POST', tokenEnv: 'BILLING_CRON_TOKEN' })], { BILLING_CRON_TOKEN: 'billing-target-token' });
    const a = await createHarness(testDb.db, { clock, jobs: jobsOf({}), crons });
    const b = await createHarness(testDb.db, { clock, jobs: jobsOf({}), crons });
    await Promise.all([a.cron.tick(), b.cron.tick()]);
    clock.set(Date.UTC(2026, 10, 23, 10, 5, 0));
    await Promise.all([a.cron.tick(), b.cron.tick()]);
    await Promise.all([a.cron.idle(5000), b.cron.idle(5000)]);
    expect(target.calls).toEqual([
      { method: 'POST', path: '/sync?token=query-secret', authorization: 'Bearer billing-target-token', userAgent: CRON_USER_AGENT },
    ]);
    expect(CRON_USER_AGENT).toMatch(/^hookrun-cron\/\d+\.\d+\.\d+$/);
    const runs = await allRuns(testDb.db);
    expect(runs).toMatchObject([{ job: 'billing-sync', trigger: 'schedule', status: 'succeeded', scheduledFor: new Date(Date.UTC(2026, 10, 23, 10, 5)) }]);
    const [job] = (await a.cron.listJobs()).filter((j) => j.name === 'billing-sync');
    expect(job).toMatchObject({ path: '/cron/billing-sync', schedule: '*/5 * * * *', description: `POST ${target.url}/sync` });
    await Promise.all([a.cron.stop(), b.cron.stop()]);
  });

  it("a target with no tokenEnv gets no Authorization header (CRON_SECRET is hookrun's own); one whose tokenEnv is unset is not called, and the run says why", async () => {
    const h = await createHarness(testDb.db, { jobs: jobsOf({}), crons: cronsFrom([entry(), entry({ name: 'unset-token', tokenEnv: 'UNSET_CRON_TOKEN' })]) });
    expect((await h.cron.runJob('billing-sync', 'cli')).status).toBe('succeeded');
    expect(target.calls).toEqual([{ method: 'GET', path: '/sync?token=query-secret', authorization: undefined, userAgent: CRON_USER_AGENT }]);
    const unset = await h.cron.runJob('unset-token', 'cli');
    expect(unset).toMatchObject({ status: 'failed', error: expect.stringContaining('UNSET_CRON_TOKEN is not set: set it') });
    expect(target.calls).toHaveLength(1);
    expect(h.cron.validate()).toContainEqual(expect.stringMatching(/crons\[1\]\.tokenEnv: UNSET_CRON_TOKEN is not set/));
    for (const run of await allRuns(testDb.db)) expect(run.error ?? '').not.toContain(SECRETS.cron);
    await h.cron.stop();
  });

  it('a non-2xx answer and no answer within timeoutMs are failures, recorded without the query string', async () => {
    const h = await createHarness(testDb.db, { jobs: jobsOf({}), crons: [entry({ timeoutMs: 300 })] });
    target.answer = 500;
    const refused = await h.cron.runJob('billing-sync', 'cli');
    expect(refused).toMatchObject({ status: 'failed', error: `GET ${target.url}/sync answered 500; a 2xx is success` });
    target.answer = 302; // a redirect is not followed: the target answered, but not with success
    expect((await h.cron.runJob('billing-sync', 'cli')).status).toBe('failed');
    target.answer = 'hang';
    const hung = await h.cron.runJob('billing-sync', 'cli');
    expect(hung.status).toBe('failed');
    expect(hung.error).toMatch(/300 ?ms/);
    for (const run of await allRuns(testDb.db)) expect(run.error ?? '').not.toContain('query-secret');
    await h.cron.stop();
  });
});

describe('HTTP targets: what platform.json may not say', () => {
  const config = (crons: CronEntry[]) => ({ ...testConfig({ PORT: '3002' }), crons });
  const files = jobsOf({ 'keep-alive': { run() {} } });

  it('a URL that calls this hookrun own /cron/ routes (a loop) is refused', () => {
    for (const url of ['http://127.0.0.1:3002/cron/billing-sync', 'http://localhost:3002/cron/keep-alive', 'http://[::1]:3002/cron/x']) {
      expect(() => withHttpTargets(files, config([{ name: 'loop', url, schedule: '* * * * *' }]))).toThrow(/calls this hookrun's own \/cron\/ routes/);
    }
    // another port, or another path on this one, is not a loop
    expect(withHttpTargets(files, config([{ name: 'other', url: 'http://127.0.0.1:3003/cron/x', schedule: '* * * * *' }])).has('other')).toBe(true);
  });

  it('plain http:// to another machine is refused at start-up, naming the entry and the fix, unless the entry sets allowHttp; https:// and loopback are fine', () => {
    const entry = (url: string, extra: Partial<CronEntry> = {}): CronEntry => ({ name: 'billing-sync', url, schedule: '* * * * *', ...extra });
    const refused = () => withHttpTargets(files, config([entry('http://billing.example.com/cron/sync?key=q', { tokenEnv: 'BILLING_CRON_TOKEN' })]));
    expect(refused).toThrow(ConfigError);
    expect(refused).toThrow(
      /crons\[0\]\.url "http:\/\/billing\.example\.com\/cron\/sync": plain http:\/\/ to another machine sends each call and its token unencrypted\. Use https:\/\/, or add "allowHttp": true/,
    );
    expect(() => withHttpTargets(files, config([entry('http://10.0.0.7:8080/sync')]))).toThrow(/allowHttp/);
    for (const ok of [
      entry('https://billing.example.com/sync'),
      entry('http://billing.internal/sync', { allowHttp: true }),
      entry('http://127.0.0.2:8080/sync'),
      entry('http://localhost:8080/sync'),
      entry('http://[::1]:8080/sync'),
    ]) {
      expect(withHttpTargets(files, config([ok])).has('billing-sync')).toBe(true);
    }
  });

  it("tokenEnv and allowHttp belong to HTTP targets; hookrun's own credentials are refused as a target token", () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookrun-targets-'));
    const read = (crons: unknown[]) => {
      writeFileSync(join(dir, 'platform.json'), JSON.stringify({ crons }));
      return () => testConfig({ PLATFORM_CONFIG: join(dir, 'platform.json'), BILLING_CRON_TOKEN: 'x' }).crons;
    };
    try {
      const target = { name: 'billing-sync', url: 'https://billing.example.com/sync', schedule: '* * * * *' };
      expect(read([{ ...target, tokenEnv: 'BILLING_CRON_TOKEN', allowHttp: false }])()).toMatchObject([
        { tokenEnv: 'BILLING_CRON_TOKEN', token: 'x', allowHttp: false },
      ]);
      expect(read([{ ...target, tokenEnv: 'CRON_SECRET' }])).toThrow(
        /crons\[0\]\.tokenEnv: "CRON_SECRET" is hookrun's own credential; give the target a token of its own/,
      );
      expect(read([{ ...target, tokenEnv: 'ADMIN_TOKEN' }])).toThrow(/hookrun's own credential/);
      expect(read([{ ...target, tokenEnv: 'lower case' }])).toThrow(/tokenEnv: only an HTTP target has one/);
      expect(read([{ path: '/cron/keep-alive', schedule: '* * * * *', tokenEnv: 'BILLING_CRON_TOKEN' }])).toThrow(/tokenEnv: only an HTTP target/);
      expect(read([{ ...target, allowHttp: 'yes' }])).toThrow(/allowHttp: only an HTTP target has one, true or false/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a name a job file has, a relative or non-http URL, and a bad name are refused with the entry named', () => {
    expect(() => withHttpTargets(files, config([{ name: 'keep-alive', url: 'https://a.example/x', schedule: '* * * * *' }]))).toThrow(
      /crons\[0\]\.name "keep-alive": a job file/,
    );
    expect(() => withHttpTargets(files, config([{ name: 'x', url: '/relative', schedule: '* * * * *' }]))).toThrow(ConfigError);
    expect(() => withHttpTargets(files, config([{ name: 'x', url: 'ftp://a.example/x', schedule: '* * * * *' }]))).toThrow(/must be an absolute http\(s\) URL/);
    expect(() => withHttpTargets(files, config([{ name: 'Billing', url: 'https://a.example/x', schedule: '* * * * *' }]))).toThrow(/lowercase letters/);
  });
});
