import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPresent, checkPage, expectNoXss, HOSTILE, loggedIn, openConsole, WIDTHS, type ConsoleBrowser } from '../helpers/console-browser.js';
import { createPgliteDatabase, type TestDatabase } from '../helpers/db.js';
import { api, deadEvent, OPERATORS, operatorsApp } from '../audit/operators-app.js';
import type { ConsoleApp } from './console-app.js';

describe.skipIf(!chromiumPresent())('operators and the audit in headless Chromium', { timeout: 120_000 }, () => {
  let testDb: TestDatabase;
  let app: ConsoleApp;
  let console_: ConsoleBrowser;
  let event: number;

  beforeAll(async () => {
    testDb = await createPgliteDatabase();
    app = await operatorsApp(testDb.db);
    event = await deadEvent(app, testDb.db);
    console_ = await openConsole(app.app);
  });
  afterAll(async () => {
    await console_?.close();
    await testDb?.close();
  });

  it.each(WIDTHS)(
    "an operator acts from the console; a viewer sees who is signed in, no action button, and the audit of the operator's actions (%i px)",
    async (width) => {
      const alice = await loggedIn(console_, width, '', OPERATORS.alice);
      expect(await alice.textContent('#signed-in')).toBe('alice · operator');
      await alice.goto(`${console_.base}/admin/jobs`);
      await alice.click('tr[data-job="tick"] button[data-action="pause"]');
      await alice.waitForURL(/did=paused/);
      await alice.click('button[data-action="resume"]');
      await alice.waitForURL(/did=resumed/);
      await alice.context().close();
      // A failed action through the admin API, with a hostile name in its target: shown, never run.
      expect((await api(app.app, 'alice', 'POST', `/cron/jobs/${encodeURIComponent(HOSTILE[1])}/run`)).status).toBe(404);

      const bob = await loggedIn(console_, width, '', OPERATORS.bob);
      expect(await bob.textContent('#signed-in')).toBe('bob · viewer');
      for (const path of ['/admin', '/admin/jobs', '/admin/jobs/tick', '/admin/handlers', `/admin/events/${event}`, '/admin/events?status=dead']) {
        await bob.goto(`${console_.base}${path}`);
        const actions = bob.locator('main form[method="post"] button');
        for (const button of await actions.all()) expect(await button.isVisible(), `${path}: ${await button.textContent()}`).toBe(false);
        expect(await bob.locator('header form.session button').isVisible()).toBe(true); // logging out is not an action
      }
      await bob.goto(`${console_.base}/admin/jobs`);
      expect(await bob.locator('tr[data-job="tick"] button[data-action="pause"]').count()).toBe(1); // drawn, hidden for the role

      await bob.click('nav a[href="/admin/audit"]');
      await bob.waitForURL(`${console_.base}/admin/audit`);
      const rows = bob.locator('#audit tbody tr');
      const listed = await rows.evaluateAll((trs) =>
        trs.map((tr) => [tr.getAttribute('data-operator'), tr.getAttribute('data-action'), tr.getAttribute('data-outcome')]),
      );
      expect(listed.slice(0, 3)).toEqual([
        ['alice', 'job.run', 'failed'],
        ['alice', 'job.resume', 'ok'],
        ['alice', 'job.pause', 'ok'],
      ]);
      expect(await rows.nth(1).textContent()).toContain('via console');
      await expectNoXss(bob);
      await checkPage(bob, 'audit', ['#audit tbody tr td:nth-child(2)', '#audit tbody tr td:nth-child(5)']);

      await bob.selectOption('select[name="outcome"]', 'failed');
      await bob.click('form.search button');
      await bob.waitForURL(/outcome=failed/);
      expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-outcome')))).toEqual(['failed']);
      await bob.context().close();
      await testDb.db.query('TRUNCATE hookrun.audit_entries');
    },
  );
});
