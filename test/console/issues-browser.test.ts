import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { HandlerRegistry } from '../../src/deliveries/registry.js';
import { createWorker } from '../../src/inbox/worker.js';
import { runIssuePass } from '../../src/issues/issue-pass.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { checkPage, chromiumPresent, expectNoXss, HOSTILE, loggedIn, openConsole, WIDTHS, type ConsoleBrowser } from '../helpers/console-browser.js';
import { testConfig } from '../helpers/config.js';
import { createPgliteDatabase, type TestDatabase } from '../helpers/db.js';
import { storeEvent } from '../inbox/fixtures.js';
import { createToolsApp, postSample, type ToolsApp } from '../tools/tools-app.js';

describe.skipIf(!chromiumPresent())('the Issues and Senders pages in headless Chromium', () => {
  let testDb: TestDatabase;
  let tools: ToolsApp;
  let console_: ConsoleBrowser;

  /** A handler failing with `message` once per event, then a monitor pass. */
  async function failWith(...messages: string[]): Promise<void> {
    const handlers = new HandlerRegistry().on(
      'crm',
      'sync',
      async ({ event }) => {
        throw new Error((event.payload as { message: string }).message);
      },
      { name: 'sync-crm' },
    );
    const worker = createWorker({
      db: testDb.db,
      config: testConfig({ MAX_ATTEMPTS: '1' }),
      clock: tools.clock,
      log: silentLogger,
      metrics: new Metrics(),
      handlers,
    });
    for (const message of messages) await storeEvent(testDb.db, 'crm', 'sync', { message });
    while ((await worker.runOnce()) > 0);
    tools.clock.advance(1000);
    await runIssuePass(testDb.db, tools.clock.now(), { silent: [] });
  }

  beforeAll(async () => {
    testDb = await createPgliteDatabase();
    tools = await createToolsApp(testDb.db);
    tools.clock.set(systemClock.now());
    console_ = await openConsole(tools.app);
  });
  afterAll(async () => {
    await console_?.close();
    await testDb?.close();
  });

  for (const width of WIDTHS) {
    it(`an issue appears, is acknowledged, then resolved; its hostile message stays text (${width} px)`, async () => {
      await testDb.db.query('DELETE FROM hookrun.issues');
      await failWith(`order 41 failed: ${HOSTILE.join(' ')}`, `order 42 failed: ${HOSTILE.join(' ')}`);
      const page = await loggedIn(console_, width);
      await page.goto(`${console_.base}/admin/issues`);
      const row = page.locator('#issues tr[data-issue]');
      await expect.poll(() => row.count()).toBe(1);
      expect(await row.getAttribute('data-status')).toBe('open');
      expect(await page.textContent('nav.counts a[data-status="open"]')).toBe('open (1)');
      expect(await row.locator('td.title').textContent()).toContain('Handler sync-crm fails: order <n> failed: <script>');
      await checkPage(page, 'issues-open', ['#issues td:first-child', '#issues td.act button']);
      await expectNoXss(page);

      await page.click(`#issues tr[data-issue] button[data-action="acknowledge"]`);
      await expect.poll(() => page.textContent('p.notice')).toContain('acknowledged');
      expect(await page.locator('#issues tr[data-issue]').count()).toBe(0);
      await page.click('nav.counts a[data-status="acknowledged"]');
      const id = await page.locator('#issues tr[data-issue]').getAttribute('data-issue');
      await page.goto(`${console_.base}/admin/issues/${id}`);
      expect(await page.textContent('#detail')).toContain(HOSTILE[0]);
      expect(await page.getAttribute('#issue a[href^="/admin/events"]', 'href')).toBe('/admin/events?handler=sync-crm&status=dead');
      await checkPage(page, 'issue-detail', ['#issue button[data-action="resolve"]']);
      await expectNoXss(page);

      await page.click('#issue button[data-action="resolve"]');
      await expect.poll(() => page.textContent('p.notice')).toContain(`Issue ${id} resolved`);
      expect(new URL(page.url()).pathname, 'resolving from the issue stays on the issue').toBe(`/admin/issues/${id}`);
      expect(await page.getAttribute('#issue', 'data-status')).toBe('resolved');
      await page.goto(`${console_.base}/admin/issues?status=resolved`);
      expect(await page.locator(`#issues tr[data-issue="${id}"]`).getAttribute('data-status')).toBe('resolved');
      await checkPage(page, 'issues-resolved', ['#issues td:first-child']);
      await page.context().close();
    });
  }

  it("acknowledging from an issue's page stays on that issue, whatever else is open", async () => {
    await testDb.db.query('DELETE FROM hookrun.issues');
    await failWith('ledger 7 out of balance', 'quota exceeded for tenant 9');
    const page = await loggedIn(console_, 390);
    await page.goto(`${console_.base}/admin/issues`);
    await expect.poll(() => page.locator('#issues tr[data-issue]').count()).toBeGreaterThanOrEqual(2);
    const id = await page.locator('#issues tr[data-issue]').first().getAttribute('data-issue');
    await page.goto(`${console_.base}/admin/issues/${id}`);
    await page.click('#issue button[data-action="acknowledge"]');
    await expect.poll(() => page.getAttribute('#issue', 'data-status')).toBe('acknowledged');
    expect(new URL(page.url()).pathname).toBe(`/admin/issues/${id}`);
    expect(await page.textContent('p.flash')).toContain(`Issue ${id} acknowledged`);
    expect(await page.getAttribute('p.flash', 'data-tone')).toBe('success');
    expect(await page.locator('#issue button[data-action="resolve"]').count()).toBe(1);
    await page.context().close();
  });

  it('the senders page shows a configured secret as configured and counts refusals', async () => {
    await postSample(tools, 'payments', 'invoice.paid');
    for (let i = 0; i < 12; i++) {
      const res = await tools.app.request('/webhooks/payments', {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      });
      expect(res.status).toBe(400);
    }
    await tools.senderRejections.flush();
    for (const width of WIDTHS) {
      const page = await loggedIn(console_, width);
      await page.goto(`${console_.base}/admin/senders`);
      const payments = page.locator('#senders tr[data-route="payments"]');
      expect(await payments.locator('td[data-secret]').getAttribute('data-secret')).toBe('configured');
      expect(await payments.locator('td.num').textContent()).toBe('1');
      expect(await payments.locator('td.rej').textContent()).toMatch(/: 12$/);
      expect(await page.textContent('body')).not.toContain(tools.config.secrets.payments!.values[0]!.slice(0, 10));
      await checkPage(page, 'senders', ['#senders td:first-child', '#senders td[data-secret]', '#senders td.rej']);
      await page.context().close();
    }
  });
});
