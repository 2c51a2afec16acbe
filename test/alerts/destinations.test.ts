import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServiceAlerts, type ServiceAlerts } from '../../src/alerts/service-alerts.js';
import { ManualClock } from '../../src/clock.js';
import { HandlerRegistry } from '../../src/deliveries/registry.js';
import { ConfigError } from '../../src/errors.js';
import { createWorker } from '../../src/inbox/worker.js';
import { listIssues } from '../../src/issues/issue-store.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { startAlertReceiver, type AlertReceiver } from '../helpers/alert-receiver.js';
import { testConfig } from '../helpers/config.js';
import { pgliteOnly, useTestDatabase } from '../helpers/db.js';
import { pollUntil } from '../helpers/poll.js';
import { storeEvent } from '../inbox/fixtures.js';

const ROUTING_KEY = 'R0123456789abcdef0123456789ABCDE';
const SIGNING_SECRET = 'whsec_' + Buffer.from('alert-signing-secret-32-bytes-ok').toString('base64');

describe.each(pgliteOnly())('alert destinations: an issue opens, then clears by itself, on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  let receiver: AlertReceiver;
  let alerts: ServiceAlerts | undefined;
  beforeEach(async () => {
    receiver = await startAlertReceiver();
  });
  afterEach(async () => {
    await alerts?.stop();
    alerts = undefined;
    await receiver.close();
  });

  /** One instance's monitor with `env`'s destinations, and a handler that fails: the issue opens, then (16 min quiet) clears. */
  async function openThenClear(env: Record<string, string>, requests: number) {
    const clock = new ManualClock(Date.now());
    alerts = createServiceAlerts(testConfig(env), silentLogger, new Metrics(), { windowMs: 50, retryDelaysMs: [50] });
    alerts.start({ db: testDb.db, clock, overdue: async () => [] }, { timer: false });
    const handlers = new HandlerRegistry().on(
      'crm',
      'sync',
      async () => {
        throw new Error('user 7 not found');
      },
      { name: 'sync-crm' },
    );
    const worker = createWorker({ db: testDb.db, config: testConfig({ MAX_ATTEMPTS: '1' }), clock, log: silentLogger, metrics: new Metrics(), handlers });
    await storeEvent(testDb.db, 'crm', 'sync', {});
    while ((await worker.runOnce()) > 0);
    clock.advance(1000);
    await alerts.check();
    const [issue] = await listIssues(testDb.db, { status: 'open' });
    await pollUntil('the trigger delivered', 10_000, () => (receiver.delivered().length >= requests / 2 ? true : undefined));
    clock.advance(16 * 60_000);
    await alerts.check();
    await receiver.waitForDelivered(requests);
    return issue!;
  }

  it('PagerDuty: POST /v2/enqueue, a trigger with summary, severity and source, then a resolve with the same dedup_key', async () => {
    receiver.answer(202, 202); // as PagerDuty answers an accepted event
    const issue = await openThenClear({ ALERT_PAGERDUTY_ROUTING_KEY: ROUTING_KEY, ALERT_PAGERDUTY_EVENTS_URL: new URL('/v2/enqueue', receiver.url).href }, 2);
    const [trigger, resolve] = receiver.requests.map((r) => ({ path: r.path, type: r.contentType, event: JSON.parse(r.body) as Record<string, unknown> }));
    expect(trigger).toEqual({
      path: '/v2/enqueue',
      type: 'application/json',
      event: {
        routing_key: ROUTING_KEY,
        event_action: 'trigger',
        dedup_key: `hookrun-issue-${issue.id}`,
        payload: {
          summary: `issue #${issue.id} Handler sync-crm fails: user <n> not found (handler_failing, 1 time so far): /admin/issues/${issue.id}`,
          severity: 'error',
          source: expect.stringMatching(/^hookrun \(.+\)$/),
          timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          component: 'hookrun',
          class: 'issue',
        },
      },
    });
    expect(resolve).toEqual({
      path: '/v2/enqueue',
      type: 'application/json',
      event: { routing_key: ROUTING_KEY, event_action: 'resolve', dedup_key: `hookrun-issue-${issue.id}` },
    });
  });

  it('the generic webhook: the documented JSON, signed so the standardwebhooks library verifies it; triggered, then resolved under one key', async () => {
    const issue = await openThenClear({ ALERT_WEBHOOK_URL: receiver.url, ALERT_WEBHOOK_SECRET: SIGNING_SECRET }, 2);
    const verifier = new Webhook(SIGNING_SECRET);
    const [triggered, resolved] = receiver.requests.map((r) => verifier.verify(r.body, r.headers) as Record<string, unknown>);
    const data = { key: `hookrun-issue-${issue.id}`, kind: 'issue', source: expect.stringMatching(/^hookrun \(.+\)$/) };
    expect(triggered).toEqual({
      type: 'alert.triggered',
      timestamp: expect.any(String),
      data: { ...data, severity: 'error', summary: expect.stringContaining(`issue #${issue.id} Handler sync-crm fails`) },
    });
    expect(resolved).toEqual({
      type: 'alert.resolved',
      timestamp: expect.any(String),
      data: { ...data, severity: 'info', summary: expect.stringContaining('cleared by itself') },
    });
    expect(receiver.requests[0]!.headers['webhook-id']).not.toBe(receiver.requests[1]!.headers['webhook-id']);
    const forged = { ...receiver.requests[0]!.headers, 'webhook-signature': receiver.requests[1]!.headers['webhook-signature']! };
    expect(() => verifier.verify(receiver.requests[0]!.body, forged)).toThrow();
  });

  it('Slack (ALERT_SLACK_WEBHOOK_URL) and ALERT_WEBHOOK_URL without a secret: {"text"} as before, the opening and the clearing', async () => {
    await openThenClear({ ALERT_SLACK_WEBHOOK_URL: receiver.url, ALERT_WEBHOOK_URL: `${receiver.url}/legacy` }, 4);
    for (const path of ['/services/T0000/B0000/alert-url-secret-part', '/services/T0000/B0000/alert-url-secret-part/legacy']) {
      const texts = receiver.requests.filter((r) => r.path === path).map((r) => Object.keys(JSON.parse(r.body) as object).join() + ' ' + r.text);
      expect(texts).toEqual([
        expect.stringMatching(/^text hookrun \(.+\): 1 issue opened/),
        expect.stringMatching(/^text hookrun \(.+\): 1 condition cleared/),
      ]);
    }
  });
});

describe('alert destination settings', () => {
  it('refuse what cannot work, naming the setting and the fix', () => {
    const refused = (env: Record<string, string>) => {
      expect(() => testConfig(env)).toThrow(ConfigError);
      try {
        testConfig(env);
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    };
    expect(refused({ ALERT_PAGERDUTY_ROUTING_KEY: 'short' })).toMatch(/ALERT_PAGERDUTY_ROUTING_KEY is not a routing key: use the 32-character Integration Key/);
    expect(refused({ ALERT_PAGERDUTY_EVENTS_URL: 'http://127.0.0.1:1/v2/enqueue' })).toMatch(/ALERT_PAGERDUTY_ROUTING_KEY is not/);
    expect(refused({ ALERT_PAGERDUTY_ROUTING_KEY: ROUTING_KEY, ALERT_PAGERDUTY_EVENTS_URL: 'http://pagerduty.example/v2/enqueue' })).toMatch(
      /plain http:\/\/ only to this machine/,
    );
    expect(refused({ ALERT_WEBHOOK_SECRET: SIGNING_SECRET })).toMatch(/ALERT_WEBHOOK_SECRET is set but ALERT_WEBHOOK_URL is not/);
    expect(refused({ ALERT_WEBHOOK_URL: 'https://alerts.example/hook', ALERT_WEBHOOK_SECRET: 'hunter2' })).toMatch(/whsec_/);
    expect(testConfig({ ALERT_WEBHOOK_URL: 'https://hooks.slack.example/x' }).alerts?.destinations).toEqual([
      { type: 'slack', setting: 'ALERT_WEBHOOK_URL', url: new URL('https://hooks.slack.example/x') },
    ]);
    expect(testConfig({ ALERT_PAGERDUTY_ROUTING_KEY: ROUTING_KEY }).alerts?.destinations).toEqual([
      { type: 'pagerduty', routingKey: ROUTING_KEY, eventsUrl: new URL('https://events.pagerduty.com/v2/enqueue') },
    ]);
  });
});
