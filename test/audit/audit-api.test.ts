import { beforeEach, describe, expect, it } from 'vitest';
import type { ConsoleApp } from '../console/console-app.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { SECRETS } from '../helpers/config.js';
import { api, consoleSession, deadEvent, failingJobIssue, listedAudit, operatorsApp } from './operators-app.js';

describe.each(databaseKinds())('the audit of every action ($name)', (kind) => {
  const testDb = useTestDatabase(kind);
  let console_: ConsoleApp;
  beforeEach(async () => {
    console_ = await operatorsApp(testDb.db);
  });

  it('records each action taken through the admin API with the operator, via api, the target and the outcome', async () => {
    const event = await deadEvent(console_, testDb.db);
    const at = new Date(console_.clock.now());
    const issue = await failingJobIssue(testDb.db, at);
    const day = new Date(console_.clock.now() - 86_400_000).toISOString().slice(0, 10);
    const calls: Array<[string, unknown?]> = [
      [`/events/${event}/replay`],
      ['/events/replay', { status: 'dead' }],
      ['/replays', { ids: [event], rate: 5 }],
      ['/replays/1/cancel'],
      ['/cron/jobs/tick/run'],
      ['/cron/jobs/tick/pause'],
      ['/cron/jobs/tick/resume', {}],
      ['/cron/jobs/tick/backfill', { from: `${day}T00:00:00Z`, to: `${day}T23:59:59Z`, dryRun: true }],
      ['/handlers/sync-crm/pause'],
      ['/handlers/sync-crm/resume'],
      [`/issues/${issue}/acknowledge`],
      [`/issues/${issue}/resolve`],
      ['/retention/prune', { dryRun: true }],
      ['/payments/reconcile', { since: '1h' }],
      ['/reconcile/github', { since: '1h' }],
      ['/handlers/no-such-handler/pause'],
    ];
    for (const [path, body] of calls) await api(console_.app, 'alice', 'POST', path, body);

    const entries = (await listedAudit(console_.app)).reverse();
    expect(entries.map((e) => [e.operator, e.role, e.via])).toEqual(calls.map(() => ['alice', 'operator', 'api']));
    expect(entries.map((e) => [e.action, e.target, e.outcome])).toEqual([
      ['event.replay', `event ${event}`, 'ok'],
      ['events.replay', null, 'ok'],
      ['replay.start', 'replay 1', 'ok'],
      ['replay.cancel', 'replay 1', 'ok'],
      ['job.run', 'tick', 'ok'],
      ['job.pause', 'tick', 'ok'],
      ['job.resume', 'tick', 'ok'],
      ['job.backfill', 'tick', 'ok'],
      ['handler.pause', 'sync-crm', 'ok'],
      ['handler.resume', 'sync-crm', 'ok'],
      ['issue.acknowledge', `issue ${issue}`, 'ok'],
      ['issue.resolve', `issue ${issue}`, 'ok'],
      ['retention.prune', null, 'ok'],
      ['reconcile', 'payments', 'failed'],
      ['reconcile', 'github', 'failed'],
      ['handler.pause', 'no-such-handler', 'failed'],
    ]);
    expect(entries[1]!.detail).toBe('0 events (status dead)');
    expect(entries[2]!.detail).toMatch(/^1 events: /);
    expect(entries[13]!.detail).toMatch(/^not_configured: STRIPE_SECRET_KEY is not set/);
    expect(entries[15]!.detail).toMatch(/^not_found: .*no-such-handler/);
    // The replayed delivery's history and the bulk replay name the operator as the audit does.
    const replays = (await (await api(console_.app, 'alice', 'GET', '/replays')).json()) as { replays: Array<{ actor: string }> };
    expect(replays.replays[0]!.actor).toBe('alice via api');
    const [issueRow] = await testDb.db.query<{ resolved_by: string }>('SELECT resolved_by FROM hookrun.issues');
    expect(issueRow!.resolved_by).toBe('alice via api');
  });

  it('records the console buttons under the signed-in name, via console; ADMIN_TOKEN still signs in as admin', async () => {
    const event = await deadEvent(console_, testDb.db);
    const alice = await consoleSession(console_.app, 'alice');
    const post = (path: string, fields: Record<string, string> = {}) =>
      console_.app.request(`/admin${path}`, {
        method: 'POST',
        headers: { cookie: alice.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf: alice.csrf, ...fields }).toString(),
      });
    expect((await post(`/events/${event}/replay`)).status).toBe(303);
    expect((await post('/cron/tick/pause')).status).toBe(303);
    expect((await post('/cron/nope/run')).status).toBe(404);
    expect((await console_.app.request('/admin/jobs', { headers: { cookie: alice.cookie } })).status).toBe(200);
    const admin = await console_.app.request('/api/cron/jobs/tick/resume', {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRETS.admin}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(admin.status).toBe(200);

    const entries = (await listedAudit(console_.app)).reverse();
    expect(entries.map((e) => [e.operator, e.via, e.action, e.target, e.outcome])).toEqual([
      ['alice', 'console', 'event.replay', `event ${event}`, 'ok'],
      ['alice', 'console', 'job.pause', 'tick', 'ok'],
      ['alice', 'console', 'job.run', 'nope', 'failed'],
      ['admin', 'api', 'job.resume', 'tick', 'ok'],
    ]);
    expect(entries[2]!.detail).toMatch(/nope/);
    const [attempt] = await testDb.db.query<{ actor: string }>(`SELECT actor FROM hookrun.event_attempts WHERE outcome = 'replayed'`);
    expect(attempt!.actor).toBe('alice via console');
  });

  it('lists the audit to a viewer too, filtered by operator and outcome, a page at a time', async () => {
    for (const path of ['/cron/jobs/tick/pause', '/cron/jobs/tick/resume', '/cron/jobs/nope/pause']) await api(console_.app, 'alice', 'POST', path, {});
    expect((await api(console_.app, 'bob', 'POST', '/cron/jobs/tick/pause')).status).toBe(403);
    const listed = await api(console_.app, 'bob', 'GET', '/audit?operator=alice&limit=2');
    expect(listed.status).toBe(200);
    type Page = { entries: Array<{ action: string; outcome: string }>; nextCursor: string | null };
    const page = (await listed.json()) as Page;
    expect(page.entries.map((e) => e.outcome)).toEqual(['failed', 'ok']);
    const rest = (await (await api(console_.app, 'bob', 'GET', `/audit?operator=alice&limit=2&cursor=${page.nextCursor}`)).json()) as Page;
    expect(rest.entries.map((e) => e.action)).toEqual(['job.pause']);
    expect(rest.nextCursor).toBeNull();
    const refused = (await (await api(console_.app, 'bob', 'GET', '/audit?outcome=refused')).json()) as { entries: Array<{ operator: string; role: string }> };
    expect(refused.entries).toMatchObject([{ operator: 'bob', role: 'viewer' }]);
    expect((await api(console_.app, 'bob', 'GET', '/audit?outcome=maybe')).status).toBe(400);
  });
});
