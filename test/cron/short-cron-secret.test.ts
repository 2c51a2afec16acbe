import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkConfig } from '../../src/cli/check.js';
import { loadConfig } from '../../src/config/config.js';
import { createNextRoute, type NextRoute } from '../../src/next/route.js';
import { countEvents } from '../helpers/app.js';
import { SECRETS, testConfig } from '../helpers/config.js';
import { createPgliteDatabase, createPostgresDatabase, useTestDatabase, type TestDatabase } from '../helpers/db.js';
import { allRuns, createHarness } from './support.js';

/** Vercel's minimum length for CRON_SECRET, and one character short of it. */
const VERCEL_LENGTH_SECRET = 'v'.repeat(16);
const SHORT_SECRET = 's'.repeat(15);

const change = (id: number) => JSON.stringify({ type: 'INSERT', table: 'profiles', schema: 'public', record: { id }, old_record: null });
const databaseDelivery = (id: number) => ({
  method: 'POST',
  body: change(id),
  headers: { 'content-type': 'application/json', authorization: `Bearer ${SECRETS.database}` },
});

describe('CRON_SECRET length', () => {
  it("accepts Vercel's 16 characters; a shorter one is a problem of /cron alone, said with what to set", async () => {
    expect(loadConfig({ CRON_SECRET: VERCEL_LENGTH_SECRET, PLATFORM_CONFIG: '/nonexistent/platform.json' })).toMatchObject({
      cronSecret: VERCEL_LENGTH_SECRET,
      cronSecretProblem: undefined,
    });
    const short = loadConfig({ CRON_SECRET: SHORT_SECRET, PLATFORM_CONFIG: '/nonexistent/platform.json' });
    expect(short.cronSecret).toBeUndefined();
    expect(short.cronSecretProblem).toMatch(/^CRON_SECRET is shorter than 16 characters: .*openssl rand -hex 32.*the webhook routes are not affected\.$/);
    const report = await checkConfig(testConfig({ CRON_SECRET: SHORT_SECRET }));
    expect(report.warnings).toContainEqual(expect.stringContaining('CRON_SECRET is shorter than 16 characters'));
  });
});

describe('a short CRON_SECRET under hookrun start (the app)', () => {
  const testDb = useTestDatabase({ name: 'pglite', create: createPgliteDatabase });

  it('/cron answers 503 not_configured, also to a local caller under CRON_LOCAL_CALLERS=allow; the receivers keep storing', async () => {
    const h = await createHarness(testDb.db, { env: { CRON_SECRET: SHORT_SECRET, CRON_LOCAL_CALLERS: 'allow' }, remoteAddress: () => '127.0.0.1' });
    for (const headers of [{ authorization: `Bearer ${SHORT_SECRET}` }, {}] as Record<string, string>[]) {
      const res = await h.app.request('/cron/keep-alive', { method: 'POST', headers });
      expect(res.status).toBe(503);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('not_configured');
      expect(body.error.message).toContain('CRON_SECRET is shorter than 16 characters');
    }
    expect(await allRuns(testDb.db)).toEqual([]);
    const stored = await h.app.request('/webhooks/database', databaseDelivery(1));
    expect(stored.status).toBe(200);
    expect(await countEvents(testDb.db, 'database')).toBe(1);
  });

  it("runs jobs for the holder of a 16-character CRON_SECRET (Vercel's minimum)", async () => {
    const h = await createHarness(testDb.db, { env: { CRON_SECRET: VERCEL_LENGTH_SECRET } });
    const res = await h.app.request('/cron/keep-alive', { method: 'POST', headers: { authorization: `Bearer ${VERCEL_LENGTH_SECRET}` } });
    expect(res.status).toBe(200);
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)('a short CRON_SECRET inside Next.js (hookrun/next)', () => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await createPostgresDatabase();
  });
  afterAll(async () => {
    await test?.close();
  });

  const mount = (cronSecret: string): NextRoute =>
    createNextRoute({
      basePath: '/api',
      after: (task) => void task(),
      env: {
        DATABASE_URL: test.url,
        DATABASE_WEBHOOK_SECRET: SECRETS.database,
        CRON_SECRET: cronSecret,
        LOG_LEVEL: 'silent',
        PLATFORM_CONFIG: '/nonexistent/platform.json',
      },
    });
  const at = (path: string, init: RequestInit = {}) => new Request(`http://app.example${path}`, init);

  it('the receivers answer 2xx; /api/cron/* and the drain answer 503 not_configured saying what to fix', async () => {
    const route = mount(SHORT_SECRET);
    const received = await route.POST(at('/api/webhooks/database', databaseDelivery(2)));
    expect(received.status).toBe(200);
    for (const path of ['/api/cron/hookrun-drain', '/api/cron/keep-alive']) {
      const res = await route.GET(at(path, { headers: { authorization: `Bearer ${SHORT_SECRET}` } }));
      expect(res.status, path).toBe(503);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error).toMatchObject({ code: 'not_configured', message: expect.stringContaining('CRON_SECRET is shorter than 16 characters') });
    }
  });

  it("drains for Vercel's 16-character CRON_SECRET", async () => {
    const route = mount(VERCEL_LENGTH_SECRET);
    const res = await route.GET(at('/api/cron/hookrun-drain', { headers: { authorization: `Bearer ${VERCEL_LENGTH_SECRET}` } }));
    expect(res.status).toBe(200);
  });
});
