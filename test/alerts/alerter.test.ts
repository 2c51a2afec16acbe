import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Alerter } from '../../src/alerts/alerter.js';
import { ALERT_USER_AGENT } from '../../src/alerts/deliver.js';
import { slackDestination } from '../../src/alerts/destination.js';
import { Metrics } from '../../src/metrics.js';
import { startAlertReceiver, type AlertReceiver } from '../helpers/alert-receiver.js';

/** A logger whose lines the test can read (to prove the URL, a credential, is never in them). */
function listLogger() {
  const lines: string[] = [];
  return { log: pino({ level: 'debug' }, { write: (l: string) => void lines.push(l) }), lines };
}

const outcomes = async (metrics: Metrics) =>
  Object.fromEntries((await metrics.alerts.get()).values.map((v) => [`${v.labels.kind}/${v.labels.outcome}`, v.value]));

describe('Alerter: coalesced, rate-limited, retried, never blocking', () => {
  let receiver: AlertReceiver;
  let alerter: Alerter | undefined;
  beforeEach(async () => {
    receiver = await startAlertReceiver();
  });
  afterEach(async () => {
    await alerter?.stop(500);
    await receiver.close();
  });

  it('sends the first line of a kind at once, then one message per window with the count; kinds are limited separately', async () => {
    const metrics = new Metrics();
    alerter = new Alerter({ destinations: [slackDestination(new URL(receiver.url), 'ALERT_WEBHOOK_URL')], log: listLogger().log, metrics, windowMs: 600 });
    alerter.notify('event_dead', 'payments invoice.paid #1: boom');
    await receiver.waitForDelivered(1);
    for (let i = 2; i <= 9; i++) alerter.notify('event_dead', `payments invoice.paid #${i}: boom`);
    alerter.notify('job_failed', 'nightly (run #4, schedule): exit 1');
    const [first, second, third] = await receiver.waitForDelivered(3);
    expect(first).toContain('1 event went dead');
    expect(first).toContain('#1: boom');
    // the job_failed kind had sent nothing yet: it goes at once, not after event_dead's window
    expect(second).toContain('1 cron run failed');
    expect(third).toContain('8 events went dead');
    expect(third).toContain('#2: boom');
    expect(third).toContain('#6: boom');
    expect(third).not.toContain('#7: boom');
    expect(third).toContain('… and 3 more');
    expect(receiver.requests).toHaveLength(3);
    expect(receiver.requests[0]).toMatchObject({ contentType: 'application/json', userAgent: ALERT_USER_AGENT });
    // The receiver records a message before it answers; the alerter counts it once the answer reaches it.
    await expect.poll(() => outcomes(metrics)).toEqual({ 'event_dead/sent': 2, 'job_failed/sent': 1 });
  });

  it('retries a message the receiver refuses (503, 429) and delivers it once', async () => {
    const metrics = new Metrics();
    receiver.answer(503, 429);
    alerter = new Alerter({
      destinations: [slackDestination(new URL(receiver.url), 'ALERT_WEBHOOK_URL')],
      log: listLogger().log,
      metrics,
      retryDelaysMs: [50, 50, 50],
    });
    alerter.notify('backlog', 'event 12 has been due for 700 s');
    expect(await receiver.waitForDelivered(1)).toHaveLength(1);
    expect(receiver.requests.map((r) => r.status)).toEqual([503, 429, 200]);
    await expect.poll(() => outcomes(metrics)).toEqual({ 'backlog/sent': 1 });
  });

  it('gives up on a 404 (a removed webhook) at once, and after the last retry otherwise; the log never shows the URL', async () => {
    const metrics = new Metrics();
    const { log, lines } = listLogger();
    receiver.answer(404, 500, 500);
    alerter = new Alerter({ destinations: [slackDestination(new URL(receiver.url), 'ALERT_WEBHOOK_URL')], log, metrics, retryDelaysMs: [50] });
    alerter.notify('event_dead', 'a');
    alerter.notify('job_failed', 'b');
    await expect.poll(() => outcomes(metrics)).toEqual({ 'event_dead/failed': 1, 'job_failed/failed': 1 });
    expect(receiver.requests.map((r) => r.status)).toEqual([404, 500, 500]);
    const logged = lines.join('');
    expect(logged).toContain('ALERT_WEBHOOK_URL answered 404');
    expect(logged).not.toContain('alert-url-secret-part');
    expect(logged).not.toContain(receiver.url);
  });

  it('a full delivery queue drops (and counts) what does not fit instead of growing without bound', async () => {
    const hung = await import('node:http').then(({ createServer }) => createServer(() => undefined));
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    const metrics = new Metrics();
    alerter = new Alerter({
      destinations: [slackDestination(new URL(`http://127.0.0.1:${(hung.address() as { port: number }).port}/hook`), 'ALERT_WEBHOOK_URL')],
      log: listLogger().log,
      metrics,
      timeoutMs: 2000,
      retryDelaysMs: [],
      maxQueued: 2,
      windowMs: 0,
    });
    for (const kind of ['event_dead', 'job_failed', 'tick_late', 'job_stopped', 'backlog'] as const) alerter.notify(kind, 'x');
    // the first is in flight, two wait, two did not fit
    expect(await outcomes(metrics)).toEqual({ 'job_stopped/dropped': 1, 'backlog/dropped': 1 });
    await alerter.stop(100);
    alerter = undefined;
    hung.closeAllConnections();
    hung.close();
  });

  it('never holds up the caller: notify returns at once while the receiver hangs, and stop() is bounded', async () => {
    const hung = await import('node:http').then(({ createServer }) => createServer(() => undefined));
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    const port = (hung.address() as { port: number }).port;
    const metrics = new Metrics();
    alerter = new Alerter({
      destinations: [slackDestination(new URL(`http://127.0.0.1:${port}/hook`), 'ALERT_WEBHOOK_URL')],
      log: listLogger().log,
      metrics,
      timeoutMs: 300,
      retryDelaysMs: [],
    });
    for (let i = 0; i < 1000; i++) alerter.notify('event_dead', `#${i}`); // synchronous: nothing to wait for
    expect(await outcomes(metrics)).toEqual({}); // the first message is still in flight, the rest coalesced in memory
    await expect.poll(() => outcomes(metrics), { timeout: 5000 }).toEqual({ 'event_dead/failed': 1 });
    alerter.notify('event_dead', 'late line');
    await alerter.stop(200); // sends what is coalesced, waits at most 200 ms for the hung receiver
    alerter = undefined;
    hung.closeAllConnections();
    hung.close();
  });
});
