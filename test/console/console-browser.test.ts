import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHART_RANGES } from '../../src/db/event-histogram.js';
import { EVENT_STATUSES } from '../../src/db/events.js';
import { SECRETS } from '../helpers/config.js';
import { checkPage, chromiumPresent, expectNoXss, HOSTILE, loggedIn, openConsole, WIDTHS, type ConsoleBrowser } from '../helpers/console-browser.js';
import { createPgliteDatabase, type TestDatabase } from '../helpers/db.js';
import { consoleApp, HANDLER, postSigned, seedHostileRun, seedInbox, type ConsoleApp } from './console-app.js';

/** Real secret values the settings page must not show any part of. */
const MORE_SECRETS = {
  STRIPE_SECRET_KEY: 'sk_test_console_browser_hides_this_key',
  ALERT_WEBHOOK_URL: 'https://hooks.slack.example/services/T1/B2/browser-alert-secret',
  CLERK_SECRET_KEY: 'sk_live_clerk_console_browser_secret_0000',
  METRICS_TOKEN: 'metrics-token-for-the-console-browser-0000',
  DATABASE_URL: 'postgres://hookrun:browser-db-password@db.internal:5432/app',
};
const SEEDED = 3000;

describe.skipIf(!chromiumPresent())('console frame and pages in headless Chromium (1280 and 390 px)', () => {
  let testDb: TestDatabase;
  let app: ConsoleApp;
  let browser: ConsoleBrowser;

  beforeAll(async () => {
    testDb = await createPgliteDatabase();
    app = await consoleApp(testDb.db, MORE_SECRETS);
    await seedInbox(testDb.db, app.clock.now(), SEEDED, HOSTILE);
    await seedHostileRun(testDb.db, app.clock.now(), HOSTILE);
    browser = await openConsole(app.app);
    for (let i = 0; i < 3; i++) await postSigned(browser.base, app);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await testDb?.close();
  });

  /** `SELECT status, count(*)` from the database, every status present (0 when none). */
  async function databaseCounts(): Promise<Record<string, number>> {
    const rows = await testDb.db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM hookrun.webhook_events GROUP BY status');
    return Object.fromEntries(EVENT_STATUSES.map((s) => [s, Number(rows.find((r) => r.status === s)?.n ?? 0)]));
  }

  /** The overview's number for each status, as the page shows it. */
  async function shownCounts(page: Page): Promise<Record<string, number>> {
    return Object.fromEntries(await Promise.all(EVENT_STATUSES.map(async (s) => [s, Number(await page.textContent(`#counts a[data-status="${s}"] b`))])));
  }

  it('walks every page at both widths: navigation, titles, key columns, no sideways scroll, and the back button', async () => {
    for (const width of WIDTHS) {
      const page = await loggedIn(browser, width);
      await checkPage(page, 'overview', ['header nav a', '#counts a', '#chart', 'header button']);
      expect(await page.title()).toBe('Overview · hookrun');
      await page.click('header nav a[href="/admin/handlers"]');
      await page.waitForURL('**/admin/handlers');
      expect(await page.title()).toBe('Handlers · hookrun');
      expect(await page.getAttribute('header nav a[aria-current="page"]', 'href')).toBe('/admin/handlers');
      await checkPage(page, 'handlers', [`tr[data-handler="${HANDLER}"] td:first-child a`, `tr[data-handler="${HANDLER}"] button[data-action="pause"]`]);
      await page.click(`tr[data-handler="${HANDLER}"] td:first-child a`);
      await page.waitForURL(`**/admin/handlers/${HANDLER}`);
      expect(await page.title()).toBe(`Handler ${HANDLER} · hookrun`);
      await checkPage(page, 'handler', ['#handler-state button', '#failures td:first-child a']);
      expect(await page.locator('#failures tbody tr').count()).toBe(HOSTILE.length);
      expect(await page.textContent('#failures')).toContain(HOSTILE[0]);
      await expectNoXss(page);
      await page.goBack();
      await page.waitForURL('**/admin/handlers');
      expect(await page.title()).toBe('Handlers · hookrun');
      await page.goBack();
      await page.waitForURL((url) => url.pathname === '/admin');
      expect(await page.title()).toBe('Overview · hookrun');

      await page.goto(`${browser.base}/admin/jobs`);
      await checkPage(page, 'jobs', [
        'tr[data-job="tick"] td:first-child a',
        'tr[data-job="tick"] button[data-action="run"]',
        'tr[data-job="tick"] button[data-action="pause"]',
        'tr[data-job="tick"] .status',
      ]);
      if (width === 1280) expect(await page.textContent('tr[data-job="tick"]')).toMatch(/\d{4}-\d{2}-\d{2} 09:00 Europe\/Berlin \(0[78]:00Z\)/);
      await page.click('tr[data-job="tick"] td:first-child a');
      await page.waitForURL('**/admin/jobs/tick');
      await checkPage(page, 'job', ['#job-state button[data-action="run"]', '#job-state button[data-action="pause"]', '#runs td:first-child']);
      await page.goto(`${browser.base}/admin/mirrors`);
      await checkPage(page, 'mirrors', ['#mirrors td:first-child a']);
      await page.goto(`${browser.base}/admin/settings`);
      await checkPage(page, 'settings', ['#settings-env td:first-child', '#settings-env td:nth-child(2)']);
      await page.context().close();
    }
  });

  it('shows the database counts of every status, and a chart whose range links switch and whose totals agree with them', async () => {
    const page = await loggedIn(browser, 1280);
    expect(await shownCounts(page)).toEqual(await databaseCounts());
    expect(Number(await page.textContent('#counts a[data-status="all"] b'))).toBe(SEEDED + 3);
    expect(await page.getAttribute('#counts a[data-status="ignored"]', 'href')).toBe('/admin/events?status=ignored');
    expect(await page.getAttribute('#chart', 'data-range')).toBe('1h');
    // The last hour's bar total equals the events received since the chart's first minute.
    const from = Math.floor(app.clock.now() / 60_000) * 60_000 - 59 * 60_000;
    const [{ n }] = (await testDb.db.query<{ n: number }>('SELECT count(*)::int AS n FROM hookrun.webhook_events WHERE received_at >= $1::timestamptz', [
      new Date(from),
    ])) as [{ n: number }];
    expect(Number(await page.textContent('#chart-received'))).toBe(Number(n));
    expect(await page.locator('#chart .axis-x span').count()).toBe(5);
    expect(Number(await page.textContent('#chart-max'))).toBeGreaterThan(0);

    for (const range of ['24h', '7d'] as const) {
      await page.click(`#chart-ranges a[data-range="${range}"]`);
      await page.waitForURL(`**/admin?range=${range}`);
      expect(await page.getAttribute('#chart', 'data-range')).toBe(range);
      expect(await page.textContent('#chart figcaption')).toContain(CHART_RANGES[range].label);
      await checkPage(page, `overview-${range}`, ['#chart', '#chart-ranges']);
    }
    // Every event is younger than 7 days: the 7 d legend is the status counts.
    const counts = await databaseCounts();
    for (const status of EVENT_STATUSES) expect(Number(await page.textContent(`#chart [data-series="${status}"] b`)), status).toBe(counts[status]);
    expect(Number(await page.textContent('#chart-received'))).toBe(SEEDED + 3);
    await page.goBack();
    await page.waitForURL('**/admin?range=24h');
    await page.context().close();
  });

  it("shows a job's hostile output inert, runs it now, and pauses and resumes it (back on the job's page)", async () => {
    for (const width of WIDTHS) {
      const page = await loggedIn(browser, width);
      await page.goto(`${browser.base}/admin/jobs/tick`);
      const hostileRun = page.locator('#runs tr', { has: page.locator('details') }).first();
      await hostileRun.locator('summary').click();
      expect(await hostileRun.locator('pre.output').textContent()).toBe(HOSTILE.join('\n'));
      await expectNoXss(page);
      const runsBefore = await page.locator('#runs tbody tr').count();
      await page.click('#job-state button[data-action="run"]');
      await page.waitForURL('**/admin/jobs/tick?job=tick&did=succeeded');
      expect(await page.textContent('p.notice')).toBe('tick ran and succeeded.');
      expect(await page.locator('#runs tbody tr').count()).toBe(runsBefore + 1);
      expect(await page.textContent('#runs tbody tr:first-child')).toContain('http');
      await page.click('#job-state button[data-action="pause"]');
      await page.waitForURL('**/admin/jobs/tick?job=tick&did=paused');
      expect(await page.textContent('#job-state')).toContain('paused');
      await checkPage(page, 'job-paused', ['#job-state button[data-action="resume"]', 'p.notice']);
      await page.click('#job-state button[data-action="resume"]');
      await page.waitForURL('**/admin/jobs/tick?job=tick&did=resumed');
      expect(await page.textContent('#job-state')).toContain('active');
      await page.context().close();
    }
  });

  it('backfills a past range of ticks from the job page (a dry run first)', async () => {
    const page = await loggedIn(browser, 390);
    await page.goto(`${browser.base}/admin/jobs/tick`);
    const day = (d: number) => new Date(app.clock.now() - d * 86_400_000).toISOString().slice(0, 16);
    await page.fill('#backfill input[name="from"]', day(3));
    await page.fill('#backfill input[name="to"]', day(1));
    await page.check('#backfill input[name="dryRun"]');
    await page.click('#backfill button');
    await page.waitForSelector('#backfill-plan');
    expect(await page.locator('#backfill-plan li').count()).toBe(2);
    expect(await page.inputValue('#backfill input[name="from"]')).toBe(day(3));
    await page.uncheck('#backfill input[name="dryRun"]');
    await page.click('#backfill button');
    await page.waitForURL('**/admin/jobs/tick?job=tick&did=backfilled&queued=2');
    await checkPage(page, 'job-backfilled', ['p.notice']);
    await page.context().close();
  });

  it('pauses and resumes a handler from its list and from its own page, each time back where the button was', async () => {
    for (const width of WIDTHS) {
      const page = await loggedIn(browser, width);
      await page.goto(`${browser.base}/admin/handlers`);
      await page.click(`tr[data-handler="${HANDLER}"] button[data-action="pause"]`);
      await page.waitForURL(`**/admin/handlers?handler=${HANDLER}&did=paused`);
      expect(await page.textContent('p.notice')).toContain(`${HANDLER} is paused on every instance`);
      expect(await page.textContent(`tr[data-handler="${HANDLER}"] .state`)).toContain('paused');
      await page.click(`tr[data-handler="${HANDLER}"] td:first-child a`);
      await page.click('#handler-state button[data-action="resume"]');
      await page.waitForURL(`**/admin/handlers/${HANDLER}?handler=${HANDLER}&did=resumed`);
      expect(await page.textContent('#handler-state')).toContain('active');
      await checkPage(page, 'handler-resumed', ['p.notice', '#handler-state button[data-action="pause"]']);
      await page.context().close();
    }
  });

  it('shows the settings with every secret masked: no secret value anywhere in the page', async () => {
    const page = await loggedIn(browser, 1280);
    await page.goto(`${browser.base}/admin/settings`);
    const content = await page.content();
    for (const secret of [...Object.values(SECRETS), ...Object.values(MORE_SECRETS)]) expect(content).not.toContain(secret);
    expect(content).not.toContain('browser-db-password');
    expect(await page.textContent('tr[data-setting="ADMIN_TOKEN"] td:nth-child(2)')).toBe('set');
    expect(await page.textContent('tr[data-setting="DATABASE_URL"] td:nth-child(2)')).toBe('set');
    expect(await page.textContent('tr[data-setting="ALERT_WEBHOOK_URL"] td:nth-child(3)')).toBe('env');
    await page.context().close();
  });

  it('updates the counts live as a signed event arrives, without a reload, and not while paused (kept across a reload)', async () => {
    const page = await loggedIn(browser, 390);
    await page.evaluate(() => localStorage.removeItem('hookrun.console.live'));
    await page.reload();
    await page.waitForSelector('body[data-live-state="live"]');
    await page.evaluate(() => ((window as unknown as { __sameDocument: boolean }).__sameDocument = true));
    const before = await shownCounts(page);
    await postSigned(browser.base, app);
    await page.waitForFunction((n) => document.querySelector('#counts a[data-status="pending"] b')?.textContent === String(n), before.pending! + 1);
    expect(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
    expect(await shownCounts(page)).toEqual(await databaseCounts());
    await checkPage(page, 'overview-live', ['#live-toggle', '#counts a']);

    await page.click('#live-toggle');
    await page.waitForSelector('body[data-live-state="paused"]');
    expect(await page.textContent('#live-toggle')).toBe('Resume live updates');
    await page.reload();
    await page.waitForSelector('body[data-live-state="paused"]');
    await page.evaluate(() => ((window as unknown as { __sameDocument: boolean }).__sameDocument = true));
    const paused = await shownCounts(page);
    await postSigned(browser.base, app);
    // The stream told the page (the button counts it), and the counts stayed as they were.
    await page.waitForFunction(() => document.getElementById('live-toggle')?.textContent === 'Resume live updates (1 new)');
    expect(await shownCounts(page)).toEqual(paused);
    await page.click('#live-toggle');
    await page.waitForFunction((n) => document.querySelector('#counts a[data-status="pending"] b')?.textContent === String(n), paused.pending! + 1);
    expect(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
    expect(await page.textContent('#live-toggle')).toBe('Pause live updates');
    await page.context().close();
  });

  it('adds a new event to the events list live, and keeps a selection being made', async () => {
    const page = await loggedIn(browser, 1280);
    await page.evaluate(() => localStorage.removeItem('hookrun.console.live'));
    await page.goto(`${browser.base}/admin/events`);
    await page.waitForSelector('body[data-live-state="live"]');
    const id = await postSigned(browser.base, app);
    await page.waitForSelector(`#events tr[data-event-id="${id}"]`);

    const refreshes = async () => Number((await page.getAttribute('body', 'data-live-refreshes')) ?? 0);
    await page.check(`#events tr[data-event-id="${id}"] input[name="ids"]`);
    const seen = await refreshes();
    const next = await postSigned(browser.base, app);
    await page.waitForFunction((n) => Number(document.body.getAttribute('data-live-refreshes')) > n, seen);
    // The refresh ran, but the table holding a checked row was left as it was.
    expect(await page.isChecked(`#events tr[data-event-id="${id}"] input[name="ids"]`)).toBe(true);
    expect(await page.locator(`#events tr[data-event-id="${next}"]`).count()).toBe(0);
    await page.uncheck(`#events tr[data-event-id="${id}"] input[name="ids"]`);
    await postSigned(browser.base, app);
    await page.waitForSelector(`#events tr[data-event-id="${next}"]`);
    await page.context().close();
  });
});
