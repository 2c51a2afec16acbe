import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { buildSample } from '../../src/webhooks/samples.js';
import { SECRETS } from '../helpers/config.js';
import { checkPage, chromiumPresent, loggedIn, openConsole, openFilters, WIDTHS, type ConsoleBrowser } from '../helpers/console-browser.js';
import { createPgliteDatabase, type TestDatabase } from '../helpers/db.js';
import { createToolsApp, type ToolsApp } from '../tools/tools-app.js';

const CUSTOMER = 'cus_Qx81upgrade';
const EMAIL = 'Jenny.Rosen@Example.com';

describe.skipIf(!chromiumPresent())(
  'the events search meets a pasted id or email, and the list is in received order (headless Chromium)',
  { timeout: 120_000 },
  () => {
    let testDb: TestDatabase;
    let tools: ToolsApp;
    let console_: ConsoleBrowser;
    const ids: number[] = [];

    /** Post a Stripe event signed by stripe-node, as Stripe sends it; its stored id. */
    async function post(object: Record<string, unknown>): Promise<number> {
      const body = JSON.stringify(buildSample('payments', 'invoice.paid', { data: { object } }, tools.clock.now()));
      const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRETS.payments, timestamp: Math.floor(tools.clock.now() / 1000) });
      const res = await tools.app.request('/webhooks/payments', {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'stripe-signature': signature },
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { id: number }).id;
    }

    beforeAll(async () => {
      testDb = await createPgliteDatabase();
      tools = await createToolsApp(testDb.db);
      tools.clock.set(systemClock.now());
      ids.push(await post({ customer: 'cus_Other0001', customer_email: 'someone@example.org' }));
      ids.push(await post({ customer: CUSTOMER, customer_email: EMAIL }));
      ids.push(await post({ customer: 'cus_Other0002' }));
      // Stored last, received a day ago: what a reconcile stores when it fills a gap.
      ids.push(await post({ customer: 'cus_Reconciled01' }));
      await testDb.db.query(`UPDATE hookrun.webhook_events SET received_at = now() - interval '1 day' WHERE id = $1`, [ids[3]]);
      console_ = await openConsole(tools.app);
    }, 60_000);

    afterAll(async () => {
      await console_?.close();
      await testDb?.close();
    });

    for (const width of WIDTHS) {
      it(`finds the event by a bare id in the search box and by an email pasted in the payload box, saying the form it searched, at ${width} px`, async () => {
        const page = await loggedIn(console_, width);
        await page.goto(`${console_.base}/admin/events`);
        await openFilters(page);
        await page.fill('input[name="q"]', CUSTOMER);
        await page.click('form.filters button[type="submit"]');
        await page.waitForURL(/q=/);
        expect(await page.locator('#events tbody tr').count()).toBe(1);
        expect(await page.getAttribute('#events tbody tr', 'data-event-id')).toBe(String(ids[1]));
        expect(await page.textContent('#list-order')).toContain(`Showing payload:${CUSTOMER}: the events whose payload holds it`);
        await checkPage(page, 'events-search-id', ['#list-order', '#events td:nth-child(2)']);

        await page.goto(`${console_.base}/admin/events`);
        await openFilters(page);
        await page.fill('input[name="where"]', EMAIL.toLowerCase());
        await page.click('form.filters button[type="submit"]');
        await page.waitForURL(/where=/);
        expect(await page.locator('#events tbody tr').count()).toBe(1);
        expect(await page.getAttribute('#events tbody tr', 'data-event-id')).toBe(String(ids[1]));
        // Moved to the search box in the form that searches it: the reader learns to type it there.
        await openFilters(page);
        expect(await page.inputValue('input[name="q"]')).toBe(`payload:${EMAIL.toLowerCase()}`);
        expect(await page.inputValue('input[name="where"]')).toBe('');
        expect(await page.textContent('#list-order')).toContain(`Showing payload:${EMAIL.toLowerCase()}`);
        await page.context().close();
      });

      it(`lists newest received first, saying so, so an event stored late with an older time sorts by that time, at ${width} px`, async () => {
        const page = await loggedIn(console_, width);
        await page.goto(`${console_.base}/admin/events`);
        expect(await page.textContent('#list-order')).toContain('Newest received first');
        const shown = await page.locator('#events tbody tr').evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-event-id'))));
        expect(shown).toEqual([ids[2], ids[1], ids[0], ids[3]]);
        await checkPage(page, 'events-received-order', ['#list-order', '#events td:nth-child(5)']);
        await page.context().close();
      });
    }
  },
);
