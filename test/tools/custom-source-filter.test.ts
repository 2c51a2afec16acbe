import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { SECRETS } from '../helpers/config.js';
import { createPgliteDatabase, type TestDatabase } from '../helpers/db.js';
import { runCli, seedDataDir } from '../helpers/spawn-hookrun.js';
import { createToolsApp, type ToolsApp } from './tools-app.js';

const dir = mkdtempSync(join(tmpdir(), 'hookrun-custom-source-'));
const PLATFORM = join(dir, 'platform.json');
writeFileSync(
  PLATFORM,
  JSON.stringify({
    webhooks: [{ route: 'acme', secretEnv: 'ACME_WEBHOOK_SECRET', algorithm: 'sha256', header: 'X-Acme-Signature', keyPath: 'id', typePath: 'type' }],
  }),
);
const INSERT_ACME = `INSERT INTO hookrun.webhook_events (source, key, type, payload, status) VALUES ('acme', 'ac_1', 'order.created', '{}'::jsonb, 'processed'), ('payments', 'evt_1', 'invoice.paid', '{}'::jsonb, 'processed')`;
const auth = { authorization: `Bearer ${SECRETS.admin}`, 'content-type': 'application/json' };

describe("a platform.json sender's source in every events filter", { timeout: 120_000 }, () => {
  let testDb: TestDatabase;
  let tools: ToolsApp;
  const get = async (path: string) => {
    const res = await tools.app.request(path, { headers: auth });
    return { status: res.status, body: (await res.json()) as { events?: Array<{ source: string }>; error?: { message: string } } };
  };
  const post = async (path: string, body: unknown) => (await tools.app.request(path, { method: 'POST', headers: auth, body: JSON.stringify(body) })).status;

  beforeAll(async () => {
    testDb = await createPgliteDatabase();
    tools = await createToolsApp(testDb.db, { PLATFORM_CONFIG: PLATFORM, ACME_WEBHOOK_SECRET: 'acme-secret' });
    await testDb.db.query(INSERT_ACME);
  });
  afterAll(async () => {
    await testDb?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the admin API lists, replays and bulk-replays by it; an unknown source is a 400 naming the known ones', async () => {
    const listed = await get('/api/events?source=acme');
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.events!.map((e) => e.source)).toEqual(['acme']);
    expect(await post('/api/events/replay', { status: 'processed', source: 'acme' })).toBe(200);
    expect(await post('/api/replays', { source: 'acme', dry_run: true })).toBe(200);

    const unknown = await get('/api/events?source=acmee');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error!.message).toMatch(/source "acmee" is not one this project receives; the sources are payments, .*acme\./);
    expect((await get('/api/events?source=Not%20A%20Route')).status).toBe(400);
    expect(await post('/api/replays', { source: 'acmee', dry_run: true })).toBe(400);
    expect((await tools.app.request('/api/events/stream?source=acmee', { headers: auth })).status).toBe(400);
  });

  it("the console's source filter offers it", async () => {
    const login = await tools.app.request('/admin/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: SECRETS.admin }).toString(),
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const page = await (await tools.app.request('/admin/events?source=acme', { headers: { cookie } })).text();
    expect(page).toMatch(/<option[^>]*value="acme"[^>]*selected/);
  });

  it('hookrun events list --source acme lists it (no server: the CLI reads the database itself)', async () => {
    await ensureDistBuilt();
    const env = { DATA_DIR: join(dir, 'data'), PLATFORM_CONFIG: PLATFORM, ACME_WEBHOOK_SECRET: 'acme-secret', LOG_LEVEL: 'warn', SCHEDULER: 'off' };
    await seedDataDir(env.DATA_DIR);
    const db = await openDatabase({ dataDir: env.DATA_DIR });
    await db.query(INSERT_ACME);
    await db.close();
    const list = await runCli(['events', 'list', '--source', 'acme', '--json'], env);
    expect(list.code, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as { events: Array<{ source: string }> }).events.map((e) => e.source)).toEqual(['acme']);
    const unknown = await runCli(['events', 'list', '--source', 'acmee'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/source "acmee" is not one this project receives; the sources are .*acme/);
  });
});
