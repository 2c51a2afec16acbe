import { beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { detectSenderRejections } from '../../src/issues/detect-senders.js';
import { prune } from '../../src/retention/prune.js';
import { silentLogger } from '../../src/log.js';
import { buildApp } from '../../src/http/build-app.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { Metrics } from '../../src/metrics.js';
import { createCronService } from '../../src/cron/cron-service.js';
import { SECRETS, testConfig } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { buildSample, signSample } from '../../src/webhooks/samples.js';

const auth = { authorization: `Bearer ${SECRETS.admin}` };

describe.each(databaseKinds())('sender refusals and the senders and issues API, on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  /** Two instances of the app on one database: each counts its own refusals. */
  async function instances(clock: ManualClock) {
    const config = testConfig();
    const cron = await createCronService({ config, db: testDb.db, clock, log: silentLogger, metrics: new Metrics(), jobs: new Map() });
    return [0, 1].map(() => ({
      config,
      ...buildApp({ config, db: testDb.db, clock, log: silentLogger, metrics: new Metrics(), writer: new EventWriter(testDb.db), cron }),
    }));
  }
  const bad = async (app: { app: { request: (path: string, init: RequestInit) => Response | Promise<Response> } }, route: string) =>
    await app.app.request(`/webhooks/${route}`, {
      method: 'POST',
      body: '{"type":"x"}',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
    });

  it('many refused requests are one row per route, reason and minute per flush, with the right counts; a week later they are pruned', async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1, 12, 0, 10));
    const [a, b] = await instances(clock);
    const statuses = new Set<number>();
    for (let i = 0; i < 40; i++) statuses.add((await bad(a!, 'payments')).status);
    for (let i = 0; i < 25; i++) statuses.add((await bad(b!, 'payments')).status);
    clock.advance(60_000); // the next minute
    for (let i = 0; i < 5; i++) await bad(a!, 'payments');
    expect(statuses).toEqual(new Set([400]));
    const rows = () =>
      testDb.db.query<{ reason: string; minute: Date; count: number }>(
        "SELECT reason, minute, count FROM hookrun.sender_rejections WHERE route = 'payments' ORDER BY minute, reason",
      );
    expect(await rows()).toEqual([]); // nothing written per request
    await Promise.all([a!.senderRejections.flush(), b!.senderRejections.flush()]);
    const written = await rows();
    expect(written.map((r) => [new Date(r.minute).toISOString(), r.count])).toEqual([
      ['2026-06-01T12:00:00.000Z', 65],
      ['2026-06-01T12:01:00.000Z', 5],
    ]);
    expect(new Set(written.map((r) => r.reason)).size).toBe(1);
    await a!.senderRejections.flush(); // nothing new: nothing written
    expect((await rows()).reduce((n, r) => n + r.count, 0)).toBe(70);

    expect(await detectSenderRejections(testDb.db, clock.now())).toBe(1); // ≥ 10 in 15 min: an issue
    const issues = (await (await a!.app.request('/api/issues', { headers: auth })).json()) as {
      issues: Array<{ kind: string; subject: string; occurrences: number }>;
    };
    expect(issues.issues).toMatchObject([{ kind: 'sender_rejecting', subject: 'payments', occurrences: 70 }]);

    const days = { events: 0, dedupeKeys: 0, cronRuns: 0 };
    await prune(testDb.db, days, clock.now() + 6 * 86_400_000);
    expect(await rows()).toHaveLength(2);
    await prune(testDb.db, days, clock.now() + 8 * 86_400_000);
    expect(await rows()).toHaveLength(0);
  });

  it('GET /api/senders: secret configured or not (never its value), last delivery, accepted and refused in 24 h', async () => {
    const clock = new ManualClock(Date.now());
    const [a] = await instances(clock);
    const body = JSON.stringify(buildSample('payments', 'invoice.paid', undefined, clock.now()));
    const ok = await a!.app.request('/webhooks/payments', { method: 'POST', body, headers: signSample('payments', body, a!.config, { nowMs: clock.now() }) });
    expect(ok.status).toBe(200);
    for (let i = 0; i < 3; i++) await bad(a!, 'payments');
    await a!.senderRejections.flush();
    const res = await a!.app.request('/api/senders', { headers: auth });
    const text = await res.text();
    for (const secret of Object.values(a!.config.secrets).flatMap((s) => s?.values ?? [])) expect(text).not.toContain(secret.slice(0, 12));
    const { senders } = JSON.parse(text) as {
      senders: Array<{ route: string; secretConfigured: boolean; lastDeliveryAt: string | null; accepted24h: number; rejections24h: Record<string, number> }>;
    };
    const payments = senders.find((s) => s.route === 'payments')!;
    expect(payments).toMatchObject({ secretConfigured: true, accepted24h: 1 });
    expect(Object.values(payments.rejections24h)).toEqual([3]);
    expect(payments.lastDeliveryAt).not.toBeNull();
    const unset = senders.find((s) => !s.secretConfigured);
    if (unset) expect(unset.lastDeliveryAt).toBeNull();

    const id = 999_999;
    expect((await a!.app.request(`/api/issues/${id}`, { headers: auth })).status).toBe(404);
    expect((await a!.app.request('/api/issues?status=nope', { headers: auth })).status).toBe(400);
    expect((await a!.app.request(`/api/issues/${id}/acknowledge`, { method: 'POST', headers: auth })).status).toBe(404);
  });
});

describe('issues acknowledged and resolved through the API', () => {
  const testDb = useTestDatabase(databaseKinds()[0]!);
  let app: Awaited<ReturnType<typeof buildApp>>['app'];
  beforeAll(async () => {
    const clock = new ManualClock(Date.now());
    const config = testConfig();
    const cron = await createCronService({ config, db: testDb.db, clock, log: silentLogger, metrics: new Metrics(), jobs: new Map() });
    app = buildApp({ config, db: testDb.db, clock, log: silentLogger, metrics: new Metrics(), writer: new EventWriter(testDb.db), cron }).app;
  });

  it('open → acknowledge → resolve; acknowledging a resolved issue is a 409', async () => {
    await testDb.db.query(
      "INSERT INTO hookrun.issues (fingerprint, kind, subject, title, detail) VALUES ('job_failing:x', 'job_failing', 'x', 'Job x fails', 'boom')",
    );
    const { issues } = (await (await app.request('/api/issues', { headers: auth })).json()) as { issues: Array<{ id: number }> };
    const id = issues[0]!.id;
    const post = (path: string) => app.request(`/api/issues/${id}/${path}`, { method: 'POST', headers: auth });
    expect(((await (await post('acknowledge')).json()) as { issue: { status: string } }).issue.status).toBe('acknowledged');
    const listed = (await (await app.request('/api/issues?status=acknowledged', { headers: auth })).json()) as { counts: Record<string, number> };
    expect(listed.counts).toEqual({ open: 0, acknowledged: 1, resolved: 0 });
    expect(((await (await post('resolve')).json()) as { issue: { status: string; resolvedBy: string } }).issue).toMatchObject({
      status: 'resolved',
      resolvedBy: 'admin via api',
    });
    expect((await post('acknowledge')).status).toBe(409);
  });
});
