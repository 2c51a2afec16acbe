import { beforeEach, describe, expect, it } from 'vitest';
import { API_ACTIONS, CONSOLE_ACTIONS } from '../../src/http/audited-actions.js';
import type { ConsoleApp } from '../console/console-app.js';
import { pgliteOnly, useTestDatabase } from '../helpers/db.js';
import { api, consoleSession, deadEvent, listedAudit, operatorsApp } from './operators-app.js';

/** A value for each route parameter the admin API and the console name. */
const SAMPLE_PARAMS: Record<string, string> = { job: 'tick', name: 'sync-crm', id: '1', sender: 'github' };

/** Every POST route the app serves under `prefix`, as registered (so a route added later is in the list without being named here). */
async function postRoutes(app: ConsoleApp, prefix: string): Promise<string[]> {
  const paths = (await app.routes()).filter((r) => r.method === 'POST' && r.path.startsWith(`${prefix}/`)).map((r) => r.path.slice(prefix.length));
  return [...new Set(paths)];
}

const fill = (pattern: string) => pattern.replace(/:(\w+)/g, (_, name: string) => SAMPLE_PARAMS[name] ?? 'x');

describe.each(pgliteOnly())('a viewer on every mutating route ($name)', (kind) => {
  const testDb = useTestDatabase(kind);
  let console_: ConsoleApp;
  beforeEach(async () => {
    console_ = await operatorsApp(testDb.db);
    await deadEvent(console_, testDb.db);
  });

  /** What an action would change: nothing may differ after a viewer tried them all. */
  const state = () =>
    testDb.db.query(
      `SELECT (SELECT count(*)::int FROM hookrun.cron_runs) AS runs, (SELECT count(*)::int FROM hookrun.cron_pauses) AS pauses,
              (SELECT count(*)::int FROM hookrun.handler_controls) AS handlers, (SELECT count(*)::int FROM hookrun.replay_batches) AS replays,
              (SELECT string_agg(status, ',') FROM hookrun.webhook_events) AS events`,
    );

  it('the admin API answers 403 forbidden naming the operator role, changes nothing, and the audit records each refusal', async () => {
    const routes = await postRoutes(console_, '/api');
    expect(routes.length).toBeGreaterThanOrEqual(Object.keys(API_ACTIONS).length);
    const before = await state();
    for (const route of routes) {
      const res = await api(console_.app, 'bob', 'POST', fill(route), { status: 'dead', since: '1h', from: '2026-01-01', to: '2026-01-02' });
      expect(res.status, route).toBe(403);
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      expect(error.code, route).toBe('forbidden');
      expect(error.message, route).toMatch(/bob signs in as a viewer, who reads but may not act: .* needs the operator role/);
    }
    expect(await state()).toEqual(before);
    const refused = await listedAudit(console_.app, '&outcome=refused');
    expect(refused).toHaveLength(routes.length);
    expect(refused.every((e) => e.operator === 'bob' && e.role === 'viewer' && e.via === 'api')).toBe(true);
    // Every mutating route has its action's name (a new route without one is recorded as "POST /path" and fails here).
    expect(refused.filter((e) => e.action.startsWith('POST ')).map((e) => e.action)).toEqual([]);
    expect((await api(console_.app, 'bob', 'GET', '/events')).status).toBe(200);
  });

  it("the console's every action answers 403 naming the operator role and changes nothing; logging out still works", async () => {
    const routes = (await postRoutes(console_, '/admin')).filter((r) => r !== '/login' && r !== '/logout');
    expect(routes.length).toBeGreaterThanOrEqual(Object.keys(CONSOLE_ACTIONS).length);
    const bob = await consoleSession(console_.app, 'bob');
    const before = await state();
    for (const route of routes) {
      const res = await console_.app.request(`/admin${fill(route)}`, {
        method: 'POST',
        headers: { cookie: bob.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf: bob.csrf, status: 'dead', rate: '5', ids: '1' }).toString(),
      });
      expect(res.status, route).toBe(403);
      expect(await res.text(), route).toContain('needs the operator role');
    }
    expect(await state()).toEqual(before);
    const refused = await listedAudit(console_.app, '&outcome=refused');
    expect(refused).toHaveLength(routes.length);
    expect(refused.every((e) => e.operator === 'bob' && e.via === 'console')).toBe(true);
    expect(refused.filter((e) => e.action.startsWith('POST ')).map((e) => e.action)).toEqual([]);
    const out = await console_.app.request('/admin/logout', {
      method: 'POST',
      headers: { cookie: bob.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: bob.csrf }).toString(),
    });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/admin/login');
  });
});
