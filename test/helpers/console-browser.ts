import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { SECRETS } from './config.js';

/** Debian's chromium package; `.ci/run` installs it with apt-get when missing. */
export const CHROMIUM = '/usr/bin/chromium';
/** Flags for headless Chromium in a container: no sandbox, no GPU, nothing fetched from the network. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Whether the browser tests can run; under CI=true a missing Chromium throws instead of skipping. */
export function chromiumPresent(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI === 'true') throw new Error(`CI=true but ${CHROMIUM} is missing: .ci/run should have installed it (apt-get install -y chromium).`);
  console.warn(`\n  SKIPPED a console browser test: no Chromium at ${CHROMIUM}. Enable it with: sudo apt-get install -y chromium\n`);
  return false;
}

/** Where the console's screenshots go (CI keeps the folder as an artifact). */
export const SCREENSHOTS = resolve(process.env.CONSOLE_SCREENSHOTS ?? 'artifacts/console');

/** The two widths every console page is checked at: a laptop and a phone. */
export const WIDTHS = [1280, 390] as const;

let launched: Promise<Browser> | undefined;

/**
 * The fork's one headless Chromium: launched by the first browser test the
 * fork runs and kept for the next ones (a launch costs about 0.35 CPU-s; the
 * suite's browser files opened 35). Test files in a fork run one at a time,
 * each in contexts of its own; `closeContexts` ends them when a file is done.
 * Relaunched if it was closed or crashed. Playwright closes it when the run
 * stops the fork (SIGTERM), and Chromium exits when its debugging pipe closes.
 */
export async function sharedBrowser(): Promise<Browser> {
  const current = await launched?.catch(() => undefined);
  if (current?.isConnected()) return current;
  launched = chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 30_000 });
  return launched;
}

/** Close every context of `browser` (the pages a test file opened), leaving the browser for the fork's next file. */
export async function closeContexts(browser: Browser): Promise<void> {
  await Promise.all(browser.contexts().map((context) => context.close()));
}

/** A served app and the fork's browser; `close` ends the server and the contexts opened in it. */
export interface ConsoleBrowser {
  base: string;
  browser: Browser;
  close(): Promise<void>;
}

/** Serve `app` (hookrun's app, or a host that mounts it) on a free port, with the fork's headless Chromium. */
export async function openConsole(app: Pick<Hono, 'fetch'> | { fetch: (request: Request) => Promise<Response> }): Promise<ConsoleBrowser> {
  const server = await new Promise<Server>((done) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => done(s as Server)) as Server;
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const browser = await sharedBrowser();
  return {
    base,
    browser,
    async close() {
      await closeContexts(browser);
      await new Promise((done) => server.close(done));
    },
  };
}

/** A logged-in page at `width` px (the session cookie set through the login form); `mount` is the path hookrun is served under, if any; `token` whose (ADMIN_TOKEN's by default). */
export async function loggedIn(console_: ConsoleBrowser, width: number, mount = '', token: string = SECRETS.admin): Promise<Page> {
  const context = await console_.browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  await page.goto(`${console_.base}${mount}/admin/login`);
  await page.fill('input[name="token"]', token);
  await page.click('button[type="submit"]');
  await page.waitForURL(`${console_.base}${mount}/admin`);
  return page;
}

/**
 * Save a full-page screenshot as `<name>-<width>.png` and check the page does
 * not scroll sideways and that each of `keys` (selectors of the columns a
 * person needs: id, type, status, the buttons) lies inside the viewport.
 */
export async function checkPage(page: Page, name: string, keys: string[] = []): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const width = page.viewportSize()!.width;
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow, `${name} at ${width} px scrolls sideways by ${overflow} px`).toBeLessThanOrEqual(0);
  for (const selector of keys) {
    const boxes = await page.locator(selector).evaluateAll((elements) => elements.map((e) => e.getBoundingClientRect().right));
    expect(boxes.length, `${name}: nothing matches ${selector}`).toBeGreaterThan(0);
    for (const right of boxes) expect(right, `${name} at ${width} px: ${selector} ends at ${right} px, off screen`).toBeLessThanOrEqual(width);
  }
}

/** Strings an attacker controls (payloads, headers, job output, errors): shown, never run. */
export const HOSTILE = [
  '<script>window.__xss=1</script>',
  '"><img src=x onerror="window.__xss=1">',
  "'><svg onload=window.__xss=1>",
  'javascript:window.__xss=1',
] as const;

/** Fails when a hostile string ran: none may set window.__xss, and none may appear as markup. */
export async function expectNoXss(page: Page): Promise<void> {
  expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
  expect(await page.locator('main script, main img[src="x"], main svg[onload]').count()).toBe(0);
}

/** The events list's filters: open at 1280 px, folded behind their summary on a phone until it is pressed. */
export async function openFilters(page: Page): Promise<void> {
  if (!(await page.locator('form.filters').isVisible())) await page.click('#filter-box > summary');
}
