import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CONSOLE_STREAMS } from '../../src/http/event-stream.js';
import { SECRETS } from '../helpers/config.js';
import { chromiumPresent, checkPage, loggedIn, openConsole, WIDTHS, type ConsoleBrowser } from '../helpers/console-browser.js';
import { createPgliteDatabase, type TestDatabase } from '../helpers/db.js';
import { pollUntil } from '../helpers/poll.js';
import { consoleApp, postSigned, type ConsoleApp } from './console-app.js';

/** Tabs of one browser on the events page: more than the 6 connections HTTP/1.1 allows a browser per host. */
const TABS = 10;

/** Open the events list in a new tab of `context`, and wait until it says it is live. */
async function eventsTab(context: BrowserContext, base: string): Promise<Page> {
  const tab = await context.newPage();
  tab.setDefaultTimeout(15_000);
  await tab.goto(`${base}/admin/events`);
  await tab.waitForSelector('body[data-live-state="live"]');
  return tab;
}

describe.skipIf(!chromiumPresent())('live updates shared by the tabs of one browser (headless Chromium)', { timeout: 180_000 }, () => {
  let testDb: TestDatabase;
  let app: ConsoleApp;
  let browser: ConsoleBrowser;

  beforeAll(async () => {
    testDb = await createPgliteDatabase();
    app = await consoleApp(testDb.db);
    browser = await openConsole(app.app);
    await postSigned(browser.base, app);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await testDb?.close();
  });

  for (const width of WIDTHS) {
    it(`ten tabs on the events page all show a new event, a new tab still loads, and closing the stream's tab hands it over, at ${width} px`, async () => {
      const first = await loggedIn(browser, width);
      const context = first.context();
      const tabs = [first];
      await first.goto(`${browser.base}/admin/events`);
      await first.waitForSelector('body[data-live-state="live"]');
      for (let i = 1; i < TABS; i++) tabs.push(await eventsTab(context, browser.base));
      expect(await first.textContent('#live-state')).toBe('Live');
      expect(await first.textContent('#live-toggle')).toBe('Pause live updates');

      const id = await postSigned(browser.base, app);
      for (const tab of tabs) await tab.waitForSelector(`#events tr[data-event-id="${id}"]`);

      // An eleventh tab loads and goes live: the ten hold one stream between them, not ten connections.
      const late = await eventsTab(context, browser.base);
      await checkPage(late, 'events-live-tabs', ['#live-state', '#live-toggle', '#events td:nth-child(2)']);
      tabs.push(late);

      // The tab holding the stream closes (it was the first to ask) and an event arrives before another tab has taken the stream over: the next one resumes where it stopped, so every tab still shows it.
      await tabs.shift()!.close();
      const next = await postSigned(browser.base, app);
      for (const tab of tabs) await tab.waitForSelector(`#events tr[data-event-id="${next}"]`);
      await context.close();
    });
  }

  it('says why the stream stopped when the server refuses it, and offers no Pause button', async () => {
    // A session made outside the browser, so no page of it follows the stream before the cap is full.
    const login = await fetch(`${browser.base}/admin/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { origin: browser.base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: SECRETS.admin }),
    });
    const [name, value] = login.headers.getSetCookie()[0]!.split(';')[0]!.split('=') as [string, string];
    const context = await browser.browser.newContext({ viewport: { width: 390, height: 900 } });
    await context.addCookies([{ name, value, url: `${browser.base}/admin` }]);
    const page = await context.newPage();
    // Fill the console's stream cap from outside the browser: the page's stream is refused with 503. The cap must hold
    // this test's streams alone: the tabs the tests before closed let theirs go when the server sees their connections
    // end, which on a busy machine can come after the cap looked full, and would free a slot for the page.
    const held = await pollUntil('the console stream cap filled by this test alone', 20_000, async () => {
      const mine: AbortController[] = [];
      for (let status = 200; status === 200;) {
        const abort = new AbortController();
        mine.push(abort);
        status = (await fetch(`${browser.base}/admin/stream`, { headers: { cookie: `${name}=${value}` }, signal: abort.signal })).status;
        expect(mine.length, 'the console stream cap let more streams in than it allows').toBeLessThanOrEqual(MAX_CONSOLE_STREAMS + 1);
      }
      mine.pop()!.abort(); // the refused one
      if (mine.length === MAX_CONSOLE_STREAMS) return mine;
      for (const abort of mine) abort.abort();
      return undefined;
    });
    try {
      await page.goto(`${browser.base}/admin/events`);
      await page.waitForSelector('body[data-live-state="stopped"]');
      expect(await page.textContent('#live-state')).toContain(`Live updates stopped: ${MAX_CONSOLE_STREAMS} console tabs already follow events live`);
      expect(await page.isHidden('#live-toggle')).toBe(true);
      await checkPage(page, 'events-live-stopped', ['#live-state']);
    } finally {
      for (const abort of held) abort.abort();
    }
    await context.close();
  });
});
