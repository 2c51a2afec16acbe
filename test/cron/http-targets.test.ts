import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { CRON_USER_AGENT, withHttpTargets } from '../../src/cron/http-target.js';
import { ConfigError } from '../../src/errors.js';
import type { CronEntry } from '../../src/platform-config.js';
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

  const entry = (extra: Partial<CronEntry> = {}): CronEntry => ({ name: 'billing-sync', url: `${target.url}/sync?token=query-secret`, schedule: '*/5 * * * *', ...extra });

  it('each tick calls the URL once, with the cron secret and hookrun-cron/<version>, across two instances', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 23, 10, 4, 59));
    const a = await createHarness(testDb.db, { clock, jobs: jobsOf({}), crons: [entry({ method: 'POST' })] });
    const b = await createHarness(testDb.db, { clock, jobs: jobsOf({}), crons: [entry({ method: 'POST' })] });
    await Promise.all([a.cron.tick(), b.cron.tick()]);
    clock.set(Date.UTC(2026, 10, 23, 10, 5, 0));
    await Promise.all([a.cron.tick(), b.cron.tick()]);
    await Promise.all([a.cron.idle(5000), b.cron.idle(5000)]);
    expect(target.calls).toEqual([{ method: 'POST', path: '/sync?token=query-secret', authorization: `Bearer ${SECRETS.cron}`, userAgent: CRON_USER_AGENT }]);
    expect(CRON_USER_AGENT).toMatch(/^hookrun-cron\/\d+\.\d+\.\d+$/);
    const runs = await allRuns(testDb.db);
    expect(runs).toMatchObject([{ job: 'billing-sync', trigger: 'schedule', status: 'succeeded', scheduledFor: new Date(Date.UTC(2026, 10, 23, 10, 5)) }]);
    const [job] = (await a.cron.listJobs()).filter((j) => j.name === 'billing-sync');
    expect(job).toMatchObject({ path: '/cron/billing-sync', schedule: '*/5 * * * *', description: `POST ${target.url}/sync` });
    await Promise.all([a.cron.stop(), b.cron.stop()]);
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

  it('a name a job file has, a relative or non-http URL, and a bad name are refused with the entry named', () => {
    expect(() => withHttpTargets(files, config([{ name: 'keep-alive', url: 'https://a.example/x', schedule: '* * * * *' }]))).toThrow(/crons\[0\]\.name "keep-alive": a job file/);
    expect(() => withHttpTargets(files, config([{ name: 'x', url: '/relative', schedule: '* * * * *' }]))).toThrow(ConfigError);
    expect(() => withHttpTargets(files, config([{ name: 'x', url: 'ftp://a.example/x', schedule: '* * * * *' }]))).toThrow(/must be an absolute http\(s\) URL/);
    expect(() => withHttpTargets(files, config([{ name: 'Billing', url: 'https://a.example/x', schedule: '* * * * *' }]))).toThrow(/lowercase letters/);
  });
});
