import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { buildSample } from '../../src/webhooks/samples.js';
import { SECRETS } from '../helpers/config.js';
import {
  checkPage,
  chromiumPresent,
  expectNoXss,
  HOSTILE,
  loggedIn,
  openConsole,
  openFilters,
  WIDTHS,
  type ConsoleBrowser,
} from '../helpers/console-browser.js';
import { createPgliteDatabase, type TestDatabase } from '../helpers/db.js';
import { createDefaultHandlers } from '../../src/inbox/handlers/defaults.js';
import { seedDeliveries } from '../inbox/fixtures.js';
import { createToolsApp, type ToolsApp } from '../tools/tools-app.js';

/** The list's key columns: the checkbox, status, type, received and id (tr > td order in events-list.ts). */
const LIST_KEYS = ['#events td:nth-child(2)', '#events td:nth-child(3)', '#events td:nth-child(4)', '#events td:nth-child(5)'];

describe.skipIf(!chromiumPresent())('console Events pages in headless Chromium', { timeout: 120_000 }, () => {
  let testDb: TestDatabase;
  let tools: ToolsApp;
  let console_: ConsoleBrowser;
  const ids: number[] = [];
  let failedId = 0;
  let signature = '';

  beforeAll(async () => {
    testDb = await createPgliteDatabase();
    tools = await createToolsApp(testDb.db);
    tools.clock.set(systemClock.now());
    // Three Stripe events, one of them carrying hostile strings in its payload, a header and (below) its handler's error.
    for (const [i, customer] of ['cus_alpha', 'cus_beta', HOSTILE[1]].entries()) {
      const event = buildSample('payments', 'invoice.payment_failed', { data: { object: { customer, note: HOSTILE[0], attempt: i } } }, tools.clock.now());
      const body = JSON.stringify(event);
      signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRETS.payments, timestamp: Math.floor(tools.clock.now() / 1000) });
      const res = await tools.app.request('/webhooks/payments', {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'stripe-signature': signature, 'x-note': HOSTILE[2] },
      });
      expect(res.status).toBe(200);
      ids.push(((await res.json()) as { id: number }).id);
    }
    failedId = ids[2]!;
    await seedDeliveries(testDb.db, createDefaultHandlers(), 'dead', { ids: [failedId], error: HOSTILE[3] + HOSTILE[0] });
    // Its history: a failed run, a replay (by a console session), and the run that went dead.
    await testDb.db.query(
      `INSERT INTO hookrun.event_attempts (event_id, attempt, run, handler, started_at, duration_ms, outcome, error, stack, actor)
       VALUES ($1, 1, 1, 'stripe-mirror', now() - interval '3 min', 40, 'failed', $2, $3, NULL),
              ($1, 0, 2, 'stripe-mirror', now() - interval '2 min', 0, 'replayed', NULL, NULL, 'console (session abcd1234)'),
              ($1, 1, 2, 'stripe-mirror', now() - interval '1 min', 35, 'dead', $2, $3, NULL)`,
      [failedId, `${HOSTILE[1]} CRM said 500`, `at run (/app/handlers/${HOSTILE[0]}.ts:3:9)`],
    );
    console_ = await openConsole(tools.app);
  }, 120_000);

  afterAll(async () => {
    await console_?.close();
    await testDb?.close();
  });

  for (const width of WIDTHS) {
    it(`filters, searches the payload, explains a failed event with its request, and selects rows for a replay at ${width} px`, async () => {
      const page = await loggedIn(console_, width);
      await page.goto(`${console_.base}/admin/events`);
      expect(await page.locator('#events tbody tr').count()).toBe(3);
      await checkPage(page, 'events-list', LIST_KEYS);
      await expectNoXss(page);

      await openFilters(page);
      await page.selectOption('select[name="status"]', 'dead');
      await page.click('form.filters button[type="submit"]');
      await page.waitForURL(/status=dead/);
      expect(await page.locator('#events tbody tr').count()).toBe(1);
      expect(await page.getAttribute('#events tbody tr', 'data-event-id')).toBe(String(failedId));

      await page.goto(`${console_.base}/admin/events`);
      await openFilters(page);
      await page.fill('input[name="where"]', 'data.object.customer = cus_beta');
      await page.click('form.filters button[type="submit"]');
      await page.waitForURL(/where=/);
      expect(await page.locator('#events tbody tr').count()).toBe(1);
      expect(await page.getAttribute('#events tbody tr', 'data-event-id')).toBe(String(ids[1]));
      expect(await page.getAttribute('#replay-matching', 'href')).toBe(
        `/admin/replays/new?where=${encodeURIComponent('data.object.customer = cus_beta').replaceAll('%20', '+')}`,
      );

      await page.goto(`${console_.base}/admin/events?where=${encodeURIComponent('data..x = 1')}`);
      expect(await page.textContent('[role="alert"]')).toContain('A payload path is');
      await page.goto(`${console_.base}/admin/events?from=not-a-time`);
      expect(await page.textContent('[role="alert"]')).toContain('from "not-a-time" is not a date or time: write an ISO 8601 date or time');

      await page.goto(`${console_.base}/admin/events/${failedId}`);
      expect(await page.textContent('#next-step')).toContain('dead after 10 attempts');
      expect(await page.textContent('#next-attempt')).toBe('-');
      expect(await page.textContent('#verification')).toContain('stripe: Stripe-Signature v1 matched');
      const html = await page.content();
      expect(html).not.toContain(signature);
      expect(html).not.toContain(signature.split('v1=')[1]);
      expect(await page.locator('#attempts tr[data-run="2"]:not(.replay-boundary)').count()).toBe(1);
      expect(await page.textContent('#attempts')).toContain('replayed by console (session abcd1234)');
      await checkPage(page, 'event-detail-dead', ['#event-status', '#next-step button', '#attempts td:nth-child(5)']);
      await expectNoXss(page);

      await page.goto(`${console_.base}/admin/events?source=payments`);
      await page.check(`input[name="ids"][value="${ids[0]}"]`);
      await page.check(`input[name="ids"][value="${ids[2]}"]`);
      await page.click('button:has-text("Replay selected")');
      await page.waitForURL(/\/admin\/replays\/new\?/);
      const chosen = new URL(page.url()).searchParams.getAll('ids');
      expect(chosen.sort()).toEqual([String(ids[0]), String(ids[2])].sort());
      await page.context().close();
    });
  }
});
