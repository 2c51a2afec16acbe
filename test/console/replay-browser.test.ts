import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createCronService } from '../../src/cron/cron-service.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { buildApp } from '../../src/http/build-app.js';
import { createDefaultHandlers } from '../../src/inbox/handlers/defaults.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { advanceReplays } from '../../src/replay/advance.js';
import { chromiumPresent, checkPage, expectNoXss, HOSTILE, loggedIn, openConsole, WIDTHS, type ConsoleBrowser } from '../helpers/console-browser.js';
import { SECRETS, testConfig } from '../helpers/config.js';
import { createPgliteDatabase, type TestDatabase } from '../helpers/db.js';
import { pollUntil } from '../helpers/poll.js';
import { seedDeliveries, storeEvent } from '../inbox/fixtures.js';
import { postSample, TEST_JOBS, type ToolsApp } from '../tools/tools-app.js';

describe.skipIf(!chromiumPresent())('bulk replay pages in headless Chromium', { timeout: 120_000 }, () => {
  let testDb: TestDatabase;
  let tools: ToolsApp;
  let console_: ConsoleBrowser;
  const ids: number[] = [];

  beforeAll(async () => {
    testDb = await createPgliteDatabase();
    const config = testConfig();
    const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
    const metrics = new Metrics();
    const cron = await createCronService({ config, db: testDb.db, log: silentLogger, metrics, clock, jobs: TEST_JOBS });
    const registry = createDefaultHandlers(); // the shipped mirrors: the dry run names the one that takes auth events
    const { app, senderRejections, routes } = buildApp({
      config,
      db: testDb.db,
      clock,
      log: silentLogger,
      metrics,
      writer: new EventWriter(testDb.db),
      cron,
      handlers: async () => registry,
    });
    tools = { app, config, clock, metrics, cron, senderRejections, routes };
    for (let i = 0; i < 3; i++) ids.push(await postSample(tools, 'auth', 'user.created'));
    // A hostile event type and caller-given actor: shown in the audit, never run.
    const hostileId = await storeEvent(testDb.db, 'auth', HOSTILE[0], { id: HOSTILE[1] });
    void hostileId; // no handler takes it: it stays as stored
    const res = await app.request('/api/replays', {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRETS.admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: HOSTILE[0], actor: HOSTILE[2], rate: 5 }),
    });
    expect(res.status).toBe(202);
    console_ = await openConsole(app);
  });
  afterAll(async () => {
    await console_?.close();
    await testDb?.close();
  });

  const statuses = async () =>
    (await testDb.db.query<{ status: string }>('SELECT status FROM hookrun.webhook_events WHERE id = ANY($1::bigint[]) ORDER BY id', [ids])).map(
      (r) => r.status,
    );

  for (const width of WIDTHS) {
    it(`at ${width} px: dry run, start, watch it finish, find it in the audit`, async () => {
      await seedDeliveries(testDb.db, createDefaultHandlers(), 'dead', { ids });
      const page = await loggedIn(console_, width);
      await page.goto(`${console_.base}/admin/replays/new?status=dead&source=auth&type=user.created`);
      await expect.poll(() => page.locator('#matched').innerText()).toMatch(/^3 event\(s\) match/);
      expect(await page.locator('#handlers').innerText()).toContain('clerk-mirror on 3 event(s)');
      expect(await statuses()).toEqual(['dead', 'dead', 'dead']); // the dry run wrote nothing
      await checkPage(page, 'replay-new', ['#start', '#rate', '#matched']);

      await page.fill('#rate', '2');
      await page.click('#start');
      await page.waitForURL(/\/admin\/replays\/\d+\?started=1$/);
      const id = Number(/replays\/(\d+)/.exec(page.url())![1]);
      expect(await page.locator('#replay-status').innerText()).toBe('running');
      expect(await page.locator('#actor').innerText()).toBe('admin via console');
      expect(await page.locator('#replay-selection').innerText()).toBe('status dead, source auth, type user.created');
      await checkPage(page, 'replay-progress', ['#cancel', '#replay-status', '#replayed']);

      // No worker and no runner in this app: drive the runner's steps on the test clock (2 a second: two slices), with no worker to yield to.
      await pollUntil('the replay to finish', 10_000, async () => {
        const step = await advanceReplays(testDb.db, tools.clock, { yieldToInbox: false });
        tools.clock.advance(1000);
        return step.batchId === id && step.done ? true : undefined;
      });
      expect(await statuses()).toEqual(['pending', 'pending', 'pending']);
      // The page refreshes itself while running: it shows the end without a reload.
      await expect.poll(() => page.locator('#replay-status').innerText(), { timeout: 10_000 }).toBe('done');
      expect(await page.locator('#replayed').innerText()).toBe('3 of 3 put back');
      expect(await page.locator('#cancel').count()).toBe(0);

      await page.goto(`${console_.base}/admin/replays`);
      const row = page.locator(`#replays tr[data-replay-id="${id}"]`);
      expect(await row.locator('td').nth(6).innerText()).toBe('done');
      await checkPage(page, 'replays-audit', ['#replays td:first-child', '#replays .status']);
      await expectNoXss(page);
      expect(await page.locator('#replays').textContent()).toContain(HOSTILE[0]); // in a column a phone hides
      await page.context().close();
    });
  }

  it('a hostile selection renders inert in the dry run', async () => {
    const page = await loggedIn(console_, 390);
    const query = new URLSearchParams({ status: 'dead', where: `data.id ~ ${HOSTILE[1]}`, type: HOSTILE[3] });
    await page.goto(`${console_.base}/admin/replays/new?${query}`);
    await expect.poll(() => page.locator('#selection').innerText()).toContain(HOSTILE[1]);
    await expectNoXss(page);
    await checkPage(page, 'replay-new-hostile', ['#matched']);
    const handlers = await page.locator('#handlers').innerText();
    expect(handlers).toMatch(/No handler would run|on 0 event/);
    await page.goto(`${console_.base}/admin/replays/new?ids=${ids[0]},abc`);
    expect(await page.locator('main').innerText()).toContain('Event ids are positive whole numbers');
    await page.context().close();
  });
});
