import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServiceAlerts, type ServiceAlerts } from '../../src/alerts/service-alerts.js';
import { ManualClock } from '../../src/clock.js';
import { createCronService } from '../../src/cron/cron-service.js';
import { HandlerRegistry } from '../../src/deliveries/registry.js';
import { createWorker } from '../../src/inbox/worker.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { startAlertReceiver, type AlertReceiver } from '../helpers/alert-receiver.js';
import { testConfig } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { jobsOf } from '../cron/support.js';
import { storeEvent } from '../inbox/fixtures.js';

const at = (hh: number, mm: number, ss = 0) => Date.UTC(2026, 10, 23, hh, mm, ss);

describe.each(databaseKinds())('each alert kind reaches a local receiver, on $name', (kind) => {
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

  /** One instance's alerts, as service.ts wires them, with a short window so a second message of a kind comes quickly. */
  function instanceAlerts(env: Record<string, string> = {}): ServiceAlerts {
    const alerts = createServiceAlerts(testConfig({ ALERT_WEBHOOK_URL: receiver.url, ...env }), silentLogger, new Metrics(), {
      windowMs: 100,
      retryDelaysMs: [50],
    });
    instances.push(alerts);
    return alerts;
  }

  it('an event that goes dead (not one that will be retried): one issue, told once at the next monitor pass', async () => {
    const alerts = instanceAlerts();
    const handlers = new HandlerRegistry().on('test', 'boom', async () => {
      throw new Error('handler bug: cannot read properties of undefined');
    });
    const clock = new ManualClock(Date.now());
    alerts.start({ db: testDb.db, clock, overdue: async () => [] });
    const worker = createWorker({
      db: testDb.db,
      config: testConfig({ MAX_ATTEMPTS: '2' }),
      clock,
      log: silentLogger,
      metrics: new Metrics(),
      handlers,
      options: { random: () => 0.5 },
    });
    await storeEvent(testDb.db, 'test', 'boom', {}, 'evt_boom_1');
    expect(await worker.runOnce()).toBe(1); // attempt 1: failed, retried later
    clock.advance(600_000);
    expect(await worker.runOnce()).toBe(1); // attempt 2 of 2: dead
    await alerts.check();
    await alerts.check(); // nothing new: no second message
    const [text] = await receiver.waitForDelivered(1);
    expect(text).toContain('1 issue opened');
    expect(text).toMatch(
      /issue #\d+ Handler test fails: handler bug: cannot read properties of undefined \(handler_failing, 2 times so far\): \/admin\/issues\/\d+/,
    );
    expect(receiver.requests).toHaveLength(1);
  });

  it('a cron run that fails: one issue however many runs fail', async () => {
    const alerts = instanceAlerts();
    const clock = new ManualClock(at(10, 0));
    alerts.start({ db: testDb.db, clock, overdue: async () => [] });
    const cron = await createCronService({
      config: testConfig(),
      db: testDb.db,
      clock,
      log: silentLogger,
      metrics: new Metrics(),
      jobs: jobsOf({ nightly: { run: () => Promise.reject(new Error('export failed: disk full')) }, fine: { run: () => undefined } }),
    });
    expect((await cron.runJob('fine', 'cli')).status).toBe('succeeded');
    expect((await cron.runJob('nightly', 'cli')).status).toBe('failed');
    clock.advance(1000);
    await alerts.check();
    expect((await cron.runJob('nightly', 'cli')).status).toBe('failed');
    clock.advance(1000);
    await alerts.check();
    const [text] = await receiver.waitForDelivered(1);
    expect(text).toContain('1 issue opened');
    expect(text).toMatch(/issue #\d+ Job nightly fails \(job_failing, 1 time so far\)/);
    expect(receiver.requests).toHaveLength(1);
    await cron.stop();
  });

  it('a tick that did not start within ALERT_LATE_TICK_SECONDS, and a job silent for twice its interval: once each, whichever of two instances sees it', async () => {
    const clock = new ManualClock(at(10, 0, 30));
    const config = { ...testConfig(), crons: [{ path: '/cron/hourly', schedule: '0 * * * *' }] };
    const cron = await createCronService({
      config,
      db: testDb.db,
      clock,
      log: silentLogger,
      metrics: new Metrics(),
      jobs: jobsOf({ hourly: { run: () => undefined } }),
    });
    const [a, b] = [instanceAlerts({ ALERT_LATE_TICK_SECONDS: '300' }), instanceAlerts({ ALERT_LATE_TICK_SECONDS: '300' })];
    for (const alerts of [a, b]) alerts.start({ db: testDb.db, clock, overdue: (grace, since) => cron.overdue(grace, since) });
    const checkBoth = () => Promise.all([a.check(), b.check()]);

    clock.set(at(11, 4)); // the 11:00 tick is 4 min behind: within the grace
    await checkBoth();
    clock.set(at(11, 6)); // 6 min: late
    await checkBoth();
    await checkBoth();
    const [late] = await receiver.waitForDelivered(1);
    expect(late).toContain('1 issue opened');
    expect(late).toMatch(/issue #\d+ Job hourly has not run on time \(job_silent, 1 time so far\)/);

    clock.set(at(11, 59, 59)); // the scheduler comes back (its first pass starts from now) and runs 12:00
    await cron.tick();
    clock.set(at(12, 0));
    await cron.tick();
    expect(await cron.idle(5000)).toBe(true);
    clock.set(at(12, 10));
    await checkBoth(); // 12:00 ran: the silent job's issue resolves by itself
    const [resolved] = await testDb.db.query<{ status: string; resolved_by: string }>(
      "SELECT status, resolved_by FROM hookrun.issues WHERE kind = 'job_silent'",
    );
    expect(resolved).toEqual({ status: 'resolved', resolved_by: 'auto' });
    const [, cleared] = await receiver.waitForDelivered(2); // told once, by whichever instance resolved it
    expect(cleared).toMatch(/1 condition cleared\n• issue #\d+ Job hourly has not run on time: cleared by itself/);

    clock.set(at(14, 1)); // no run since 12:00: 2 h 1 min > 2 × 1 h; and 13:00 never started: the issue reopens, told once more
    await checkBoth();
    const all = await receiver.waitForDelivered(3);
    expect(all[2]).toMatch(/issue #\d+ Job hourly has not run on time \(job_silent, 2 times so far\)/);
    const [detail] = await testDb.db.query<{ detail: string }>("SELECT detail FROM hookrun.issues WHERE kind = 'job_silent'");
    expect(detail!.detail).toContain('hourly: the 2026-11-23T13:00:00.000Z tick has not started (61 min late)');
    expect(detail!.detail).toMatch(/hourly: last run 2026-11-23T12:00:00\.\d{3}Z, though it is scheduled every 60 min/);
    await checkBoth();
    expect(receiver.requests).toHaveLength(3);
    await cron.stop();
  });

  it('events due longer than ALERT_BACKLOG_SECONDS (no worker is taking them)', async () => {
    const id = await storeEvent(testDb.db, 'payments', 'invoice.paid', {});
    await storeEvent(testDb.db, 'payments', 'invoice.paid', {});
    const clock = new ManualClock(Date.now() + 30_000);
    const a = instanceAlerts({ ALERT_BACKLOG_SECONDS: '60' });
    const b = instanceAlerts({ ALERT_BACKLOG_SECONDS: '60' });
    for (const alerts of [a, b]) alerts.start({ db: testDb.db, clock, overdue: async () => [] });
    await Promise.all([a.check(), b.check()]); // due for 30 s: fine
    clock.advance(60_000);
    await Promise.all([a.check(), b.check()]);
    await Promise.all([a.check(), b.check()]);
    const [text] = await receiver.waitForDelivered(1);
    expect(text).toContain('issue #');
    expect(text).toContain('Events wait longer than ALERT_BACKLOG_SECONDS (is a worker running?) (backlog, 1 time so far)');
    const [issue] = await testDb.db.query<{ detail: string }>("SELECT detail FROM hookrun.issues WHERE kind = 'backlog'");
    expect(issue!.detail).toMatch(new RegExp(`event ${id} has been due for 9\\d s; 2 events are due`));
    expect(receiver.requests).toHaveLength(1);
  });
});
