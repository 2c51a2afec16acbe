import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServiceAlerts, type ServiceAlerts } from '../../src/alerts/service-alerts.js';
import { ManualClock } from '../../src/clock.js';
import { HandlerRegistry } from '../../src/deliveries/registry.js';
import { createWorker } from '../../src/inbox/worker.js';
import { acknowledgeIssue, listIssues, resolveIssue } from '../../src/issues/issue-store.js';
import { messageHash, normaliseMessage } from '../../src/issues/normalise.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { startAlertReceiver, type AlertReceiver } from '../helpers/alert-receiver.js';
import { testConfig } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { storeEvent } from '../inbox/fixtures.js';

describe('normaliseMessage', () => {
  it('strips numbers, ids, uuids, quoted values and times, and keeps the words', () => {
    expect(normaliseMessage('user 123 not found')).toBe(normaliseMessage('user 456 not found'));
    expect(normaliseMessage('customer cus_NffrFeUfNV2Hib has no "plan_x" (at 2026-11-20T08:00:00Z)')).toBe(
      normaliseMessage("customer cus_Q2w3e4r5t6y7u8 has no 'gold' (at 2026-11-21T09:10:11.123Z)"),
    );
    expect(normaliseMessage('row 3f2504e0-4f89-11d3-9a0c-0305e82c3301 locked')).toBe('row <id> locked');
    expect(normaliseMessage('user 1 not found')).not.toBe(normaliseMessage('card declined'));
    expect(normaliseMessage('boom (gave up after 5 attempts)')).toBe('boom');
  });

  it('gives one fingerprint to messages that differ only by provider ids, uuids, numbers and emails', () => {
    const sameBug = [
      'entitlement sync: customer cus_X has no subscription (user user_2abc, 3 tries, ops@example.com)',
      'entitlement sync: customer cus_story_9f8e7d6c5b4a has no subscription (user user_story_9f8e7d6c5b4a, 12 tries, jane.doe+test@shop.example.org)',
      'entitlement sync: customer cus_NffrFeUfNV2Hib has no subscription (user 3f2504e0-4f89-11d3-9a0c-0305e82c3301, 1 tries, a@b.io)',
    ];
    expect(new Set(sameBug.map((m) => messageHash(normaliseMessage(m)))).size).toBe(1);
    expect(normaliseMessage('event evt_1NqYz2 for sub_story_abc')).toBe('event <id> for <id>');
    expect(normaliseMessage('column user_id is missing')).not.toBe(normaliseMessage('column org_id is missing'));
    expect(normaliseMessage('card_declined')).toBe('card_declined');
  });
});

describe.each(databaseKinds())('issues from a monitor pass, on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  let receiver: AlertReceiver;
  const instances: ServiceAlerts[] = [];
  beforeEach(async () => {
    receiver = await startAlertReceiver();
  });
  afterEach(async () => {
    await Promise.all(instances.splice(0).map((a) => a.stop()));
    await receiver.close();
  });

  /** Two instances' monitors on one database and one clock, and a worker whose handler fails with the payload's message. */
  function setup() {
    const clock = new ManualClock(Date.now());
    const monitors = [0, 1].map(() => {
      const alerts = createServiceAlerts(testConfig({ ALERT_WEBHOOK_URL: receiver.url }), silentLogger, new Metrics(), { windowMs: 50, retryDelaysMs: [50] });
      instances.push(alerts);
      alerts.start({ db: testDb.db, clock, overdue: async () => [] }, { timer: false });
      return alerts;
    });
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
      clock,
      log: silentLogger,
      metrics: new Metrics(),
      handlers,
      options: { random: () => 0.5 },
    });
    const fail = async (...messages: string[]) => {
      for (const message of messages) await storeEvent(testDb.db, 'crm', 'sync', { message });
      while ((await worker.runOnce()) > 0);
    };
    const checkBoth = () => Promise.all(monitors.map((m) => m.check()));
    return { clock, fail, checkBoth };
  }

  it('groups messages that differ only in ids into one issue, different messages into two; each told once with two monitors', async () => {
    const { clock, fail, checkBoth } = setup();
    await fail('user 123 not found', 'user 456 not found', 'card declined');
    clock.advance(1000);
    await checkBoth();
    await checkBoth();
    const issues = await listIssues(testDb.db, { status: 'open' });
    expect(issues.map((i) => [i.kind, i.subject, i.occurrences]).sort()).toEqual([
      ['handler_failing', 'sync-crm', 1],
      ['handler_failing', 'sync-crm', 2],
    ]);
    expect(issues.find((i) => i.occurrences === 2)!.title).toBe('Handler sync-crm fails: user <n> not found');
    const delivered = (await receiver.waitForDelivered(2)).join('\n');
    for (const issue of issues) expect(delivered.split(`/admin/issues/${issue.id}`)).toHaveLength(2); // once each
    await checkBoth();
    expect(receiver.delivered()).toHaveLength(2);
  });

  it('open → more failures counted once (two monitors) → acknowledged (no notification) → resolved by itself → reopens and is told again', async () => {
    const { clock, fail, checkBoth } = setup();
    await fail('user 1 not found');
    clock.advance(1000);
    await checkBoth();
    await receiver.waitForDelivered(1);
    let [issue] = await listIssues(testDb.db, { status: 'open' });
    expect(issue).toMatchObject({ status: 'open', occurrences: 1, resolvedAt: null });

    await fail('user 2 not found', 'user 3 not found');
    clock.advance(1000);
    await checkBoth();
    await checkBoth();
    [issue] = await listIssues(testDb.db, { status: 'open' });
    expect(issue!.occurrences).toBe(3);
    expect(issue!.detail).toMatch(/^user \d not found/);

    await acknowledgeIssue(testDb.db, issue!.id, new Date(clock.now()));
    await fail('user 4 not found');
    clock.advance(1000);
    await checkBoth();
    [issue] = await listIssues(testDb.db, { status: 'acknowledged' });
    expect(issue!.occurrences).toBe(4);

    clock.advance(14 * 60_000); // quiet for 14 min: still acknowledged
    await checkBoth();
    expect((await listIssues(testDb.db, { status: 'acknowledged' })).map((i) => i.id)).toEqual([issue!.id]);
    clock.advance(2 * 60_000); // 16 min: resolved by itself
    await checkBoth();
    [issue] = await listIssues(testDb.db, { status: 'resolved' });
    expect(issue).toMatchObject({ resolvedBy: 'auto', occurrences: 4 });

    clock.advance(1000);
    await fail('user 5 not found'); // it recurs: the same issue reopens and is told once more
    clock.advance(1000);
    await checkBoth();
    [issue] = await listIssues(testDb.db, { status: 'open' });
    expect(issue).toMatchObject({ occurrences: 5, resolvedAt: null, resolvedBy: null, acknowledgedAt: null });
    const delivered = await receiver.waitForDelivered(3);
    expect(delivered[1]).toContain(`1 condition cleared\n• issue #${issue!.id} Handler sync-crm fails: user <n> not found: cleared by itself`);
    expect(delivered[2]).toContain(`issue #${issue!.id} Handler sync-crm fails: user <n> not found (handler_failing, 5 times so far)`);

    await resolveIssue(testDb.db, issue!.id, new Date(clock.now()), 'admin-api'); // by hand: stays resolved while nothing new fails
    clock.advance(1000);
    await checkBoth();
    expect(await listIssues(testDb.db, { status: 'resolved' })).toMatchObject([{ id: issue!.id, resolvedBy: 'admin-api' }]);
    expect(receiver.delivered()).toHaveLength(3); // a hand resolve is not told
  });
});
