import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSample } from '../../src/webhooks/samples.js';
import { chromiumPresent, loggedIn, openConsole, type ConsoleBrowser } from '../helpers/console-browser.js';
import { SECRETS } from '../helpers/config.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { MOUNT, mountedRoute, nextRouter } from './console-mounted.js';

describe.skipIf(!chromiumPresent())('the console under hookrun/next at a mount path, in headless Chromium', () => {
  let testDb: TestDatabase;
  let project: string;
  let browser: ConsoleBrowser;

  beforeAll(async () => {
    testDb = await createPostgresDatabase();
    project = mkdtempSync(join(tmpdir(), 'hookrun-mounted-browser-'));
    mkdirSync(join(project, 'jobs'));
    browser = await openConsole({ fetch: nextRouter(mountedRoute(testDb.url!, project)) });
    expect((await fetch(`${browser.base}${MOUNT}/admin/login`)).status).toBe(200); // the function's first request starts hookrun: not within a page's timeout
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await testDb?.close();
    if (project) rmSync(project, { recursive: true, force: true });
  });

  /** A signed database webhook through the mount, as the sender posts it. */
  async function receive(): Promise<void> {
    const res = await fetch(`${browser.base}${MOUNT}/webhooks/database`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRETS.database}`, 'content-type': 'application/json' },
      body: JSON.stringify(buildSample('database', 'INSERT')),
    });
    expect(res.status).toBe(200);
  }

  it('logs in, updates live from the stream, follows its links and posts its forms, all under the mount', async () => {
    const page = await loggedIn(browser, 1280, MOUNT);
    await page.waitForSelector('body[data-live-state="live"]'); // the script loaded from the mount and its stream is open
    const all = async () => Number(await page.textContent('#counts a[data-status="all"] b'));
    const before = await all();
    await receive();
    await page.waitForFunction((n) => document.querySelector('#counts a[data-status="all"] b')?.textContent === String(n), before + 1);

    await page.click('header nav a:has-text("Events")');
    await page.waitForURL(`${browser.base}${MOUNT}/admin/events`);
    await page.click('main table tbody a >> nth=0');
    await page.waitForURL(new RegExp(`${MOUNT}/admin/events/\\d+$`));
    await page.click('main form[action$="/replay"] button[type="submit"]');
    await page.waitForURL(new RegExp(`${MOUNT}/admin/events/\\d+\\?replayed=1$`));

    await page.click('header form[action$="/logout"] button');
    await page.waitForURL(`${browser.base}${MOUNT}/admin/login`);
    await page.goto(`${browser.base}${MOUNT}/admin`);
    await page.waitForURL(`${browser.base}${MOUNT}/admin/login`); // the mount's cookie is gone
    await page.context().close();
  });
});
