import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSample, signSample } from '../../src/webhooks/samples.js';
import { SECRETS } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { runCli } from '../helpers/spawn-hookrun.js';
import { consoleApp, type ConsoleApp } from './console-app.js';

const auth = { authorization: `Bearer ${SECRETS.admin}`, 'content-type': 'application/json' };
/** The window typed in the console's datetime-local inputs (no offset: UTC, as the form says). */
const WINDOW = { from: '2020-01-01T09:00', to: '2020-01-01T10:00' };
/** When each event arrived: one inside the window read as UTC, two inside it read as New York time (14:00Z-15:00Z). */
const RECEIVED = ['2020-01-01T09:30:00Z', '2020-01-01T14:10:00Z', '2020-01-01T14:20:00Z'];

describe.each(databaseKinds())('one date rule, on a server in New York, on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  const zone = process.env.TZ;
  beforeAll(() => void (process.env.TZ = 'America/New_York'));
  afterAll(() => (zone === undefined ? delete process.env.TZ : void (process.env.TZ = zone)));

  async function seed(console_: ConsoleApp): Promise<number[]> {
    const ids: number[] = [];
    for (const at of RECEIVED) {
      const body = JSON.stringify(buildSample('auth', 'user.created', undefined, console_.clock.now()));
      const res = await console_.app.request('/webhooks/auth', {
        method: 'POST',
        body,
        headers: signSample('auth', body, console_.config, { nowMs: console_.clock.now() }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
      const { id } = (await res.json()) as { id: number };
      await testDb.db.query(`UPDATE hookrun.webhook_events SET received_at = $2::timestamptz WHERE id = $1`, [id, at]);
      ids.push(id);
    }
    return ids;
  }

  it("the console's list and its bulk replay of the same query select the same events; so do the admin API and the CLI", async () => {
    expect(new Date(2020, 0, 1).getTimezoneOffset()).toBe(300); // the zone took: a reader of local time would shift the window 5 h
    const console_ = await consoleApp(testDb.db);
    const [inWindow] = await seed(console_);
    const login = await console_.app.request('/admin/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: SECRETS.admin }).toString(),
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const query = new URLSearchParams(WINDOW).toString();

    const list = await (await console_.app.request(`/admin/events?${query}`, { headers: { cookie } })).text();
    expect([...list.matchAll(/data-event-id="(\d+)"/g)].map((m) => Number(m[1]))).toEqual([inWindow]);
    const replay = await (await console_.app.request(`/admin/replays/new?${query}`, { headers: { cookie } })).text();
    expect(/id="matched"><b>(\d+)<\/b>/.exec(replay)?.[1]).toBe('1');

    const apiList = await console_.app.request(`/api/events?${query}`, { headers: auth });
    expect(apiList.status, await apiList.clone().text()).toBe(200);
    expect(((await apiList.json()) as { events: Array<{ id: number }> }).events.map((e) => e.id)).toEqual([inWindow]);
    const dry = await console_.app.request('/api/replays', { method: 'POST', headers: auth, body: JSON.stringify({ ...WINDOW, dry_run: true }) });
    expect(dry.status, await dry.clone().text()).toBe(200);
    expect(((await dry.json()) as { plan: { matched: number } }).plan.matched).toBe(1);

    if (testDb.url) {
      const cli = await runCli(['events', 'list', '--from', WINDOW.from, '--to', WINDOW.to, '--json'], {
        DATABASE_URL: testDb.url,
        ADMIN_TOKEN: SECRETS.admin,
      });
      expect(cli.code, cli.stderr).toBe(0);
      expect((JSON.parse(cli.stdout) as { events: Array<{ id: number }> }).events.map((e) => e.id)).toEqual([inWindow]);
    }
  });
});
