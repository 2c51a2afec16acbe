import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { buildSample, signSample } from '../../src/webhooks/samples.js';
import { SECRETS } from '../helpers/config.js';
import { createPgliteDatabase, type TestDatabase } from '../helpers/db.js';
import { createDefaultHandlers } from '../../src/inbox/handlers/defaults.js';
import { seedDeliveries } from '../inbox/fixtures.js';
import { createToolsApp, type ToolsApp } from './tools-app.js';
import { chromiumPresent, closeContexts, sharedBrowser, openFilters } from '../helpers/console-browser.js';

const CHROMIUM_PRESENT = chromiumPresent();

describe.skipIf(!CHROMIUM_PRESENT)('dashboard in headless Chromium', () => {
  let testDb: TestDatabase;
  let tools: ToolsApp;
  let server: Server;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    testDb = await createPgliteDatabase();
    tools = await createToolsApp(testDb.db);
    tools.clock.set(systemClock.now());
    server = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: tools.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server)) as Server;
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await sharedBrowser();
  });

  afterAll(async () => {
    if (browser) await closeContexts(browser);
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    await testDb?.close();
  });

  it('logs in with the token, shows an event that was just posted, and replays it', async () => {
    const event = buildSample('auth', 'user.created', undefined, tools.clock.now()) as { data: { id: string } };
    const body = JSON.stringify(event);
    const posted = await fetch(`${base}/webhooks/auth`, {
      method: 'POST',
      body,
      headers: signSample('auth', body, tools.config, { nowMs: tools.clock.now() }),
    });
    expect(posted.status).toBe(200);
    const { id } = (await posted.json()) as { id: number };
    // No worker runs here: make it dead, as if its handler had failed for good.
    await seedDeliveries(testDb.db, createDefaultHandlers(), 'dead', { ids: [id], error: 'handler failed' });

    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${base}/admin`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');

    await page.fill('input[name="token"]', 'wrong-token');
    await page.click('button[type="submit"]');
    await expect.poll(() => page.textContent('body')).toContain('That is not the ADMIN_TOKEN');

    await page.fill('input[name="token"]', SECRETS.admin);
    await page.click('button[type="submit"]');
    await page.waitForURL(`${base}/admin`);
    await page.goto(`${base}/admin/events`);
    const row = page.locator(`#events tr[data-event-id="${id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain('user.created');
    expect(await row.textContent()).toContain('dead');

    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'hookrun_admin', httpOnly: true, sameSite: 'Strict', path: '/admin' });
    expect(cookie!.value).not.toContain(SECRETS.admin);

    await row.locator('a').first().click();
    await page.waitForURL(`${base}/admin/events/${id}`);
    expect(await page.textContent('#payload')).toContain(event.data.id);
    expect(await page.textContent('#event-status')).toContain('dead');

    await page.click('#next-step button:has-text("Replay")');
    await page.waitForURL(`${base}/admin/events/${id}?replayed=1`);
    expect(await page.textContent('[role="status"]')).toContain('Replayed');
    expect(await page.textContent('#event-status')).toContain('pending');
    const rows = await testDb.db.query<{ status: string; attempts: number }>('SELECT status, attempts FROM hookrun.webhook_events WHERE id = $1', [id]);
    expect(rows[0]).toEqual({ status: 'pending', attempts: 0 });
    await context.close();
  });

  it('searches by key and filters by type; nothing overflows at 1280 px or 390 px', async () => {
    const keys: string[] = [];
    for (const type of ['user.created', 'user.updated', 'organization.created']) {
      const body = JSON.stringify(buildSample('auth', type, undefined, tools.clock.now()));
      const headers = signSample('auth', body, tools.config, { nowMs: tools.clock.now() });
      keys.push(String(headers['svix-id']));
      expect((await fetch(`${base}/webhooks/auth`, { method: 'POST', body, headers })).status).toBe(200);
    }
    const long = 'TypeError: cannot read properties of undefined (reading "email_addresses") at handler '.repeat(6);
    const [failing] = await testDb.db.query<{ id: number }>(`SELECT id FROM hookrun.webhook_events WHERE key = $1`, [keys[2]]);
    await seedDeliveries(testDb.db, createDefaultHandlers(), 'dead', { ids: [Number(failing!.id)], error: long });

    const shots = mkdtempSync(join(tmpdir(), 'hookrun-dashboard-shots-'));
    for (const width of [1280, 390]) {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      await page.goto(`${base}/admin/login`);
      await page.fill('input[name="token"]', SECRETS.admin);
      await page.click('button[type="submit"]');
      await page.waitForURL(`${base}/admin`);

      await page.goto(`${base}/admin/events`);
      await openFilters(page);
      await page.fill('input[name="q"]', keys[1]!);
      await page.click('form.filters button[type="submit"]');
      await page.waitForURL(/q=/);
      expect(await page.locator('#events tbody tr').count()).toBe(1);
      expect(await page.textContent('#events')).toContain('user.updated');
      await page.goto(`${base}/admin/events?type=organization.created`);
      expect(await page.locator('#events tbody tr').count()).toBe(1);
      await page.goto(`${base}/admin/events?q=user.`);
      expect(await page.locator('#events tbody tr').count()).toBeGreaterThanOrEqual(2);
      await page.goto(`${base}/admin/events?q=nothing-like-this`);
      expect(await page.textContent('main')).toContain('No events match these filters');
      tools.clock.set(systemClock.now()); // relative times are read from the app's clock
      await page.goto(`${base}/admin/events`);
      expect(await page.textContent('#events')).toMatch(/ago|just now/);

      const id = (await testDb.db.query<{ id: number }>('SELECT id FROM hookrun.webhook_events WHERE key = $1', [keys[2]]))[0]!.id;
      for (const path of ['/admin', '/admin/events', `/admin/events/${id}`]) {
        await page.goto(`${base}${path}`);
        await page.screenshot({ path: join(shots, `${path.replaceAll('/', '_')}-${width}.png`), fullPage: true });
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow, `${path} at ${width} px overflows by ${overflow} px`).toBeLessThanOrEqual(0);
      }
      expect(await page.getAttribute('#payload-box', 'open')).not.toBeNull();
      const raw = await page.request.get(`${base}/admin/events/${id}/payload.json`);
      expect(raw.headers()['content-type']).toContain('application/json');
      expect(((await raw.json()) as { type: string }).type).toBe('organization.created');
      await context.close();
    }
    rmSync(shots, { recursive: true, force: true });
  });
});
