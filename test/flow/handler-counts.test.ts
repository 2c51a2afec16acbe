import { describe, expect, it } from 'vitest';
import type { HandlerOverview } from '../../src/inbox/handler-overview.js';
import { waitingTotal } from '../../src/inbox/handler-overview.js';
import { SECRETS } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { drain, storeEvent } from '../inbox/fixtures.js';
import { operatorApp, recorder } from './operator-app.js';
import { parseFlowOptions } from '../../src/flow/options.js';
import { HandlerRegistry } from '../../src/deliveries/registry.js';

type Listed = Omit<HandlerOverview, 'pausedAt'> & { pausedAt: string | null };
const form = (fields: Record<string, string>) => ({ 'content-type': 'application/x-www-form-urlencoded', body: new URLSearchParams(fields).toString() });

/** Two handlers on one type: `plain` runs inline, `limited` under a concurrency limit; both fail when told. */
function twoHandlers(fails: (handler: string, eventId: number) => boolean) {
  const calls = recorder();
  calls.fail = fails;
  const handlers = new HandlerRegistry();
  for (const [name, flow] of [
    ['plain', undefined],
    ['limited', parseFlowOptions({ concurrency: { limit: 1 } })],
  ] as const) {
    handlers.on(
      'test',
      'order',
      async ({ event }) => {
        calls.seen.push({ handler: name, eventId: event.id });
        if (calls.fail(name, event.id)) throw new Error(`${name} boom ${event.id}`);
      },
      { name, isolated: true, flow },
    );
  }
  return { handlers, calls };
}

describe.each(databaseKinds())('handler counts from the delivery rows on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  it('the console, GET /api/handlers and GET /api/events?handler= count the same rows; an event shows its deliveries’ attempts', async () => {
    const ids: number[] = [];
    const { handlers } = twoHandlers((handler, id) => (handler === 'plain' && id <= ids[2]!) || (handler === 'limited' && (id === ids[3] || id === ids[4])));
    const { api, app, worker, clock } = await operatorApp(testDb.db, handlers, { MAX_ATTEMPTS: '2' });
    for (let i = 0; i < 6; i++) ids.push(await storeEvent(testDb.db, 'test', 'order', { n: i }));
    await drain(worker);
    clock.advance(3_600_000);
    await drain(worker); // plain: 3 dead; limited: 2 dead; the rest processed
    expect((await (await api('POST', '/handlers/limited/pause')).json()) as object).toMatchObject({ paused: true });
    for (let i = 0; i < 2; i++) ids.push(await storeEvent(testDb.db, 'test', 'order', { n: 6 + i }));
    await drain(worker); // plain runs them; limited's wait for the pause

    const listed = ((await (await api('GET', '/handlers')).json()) as { handlers: Listed[] }).handlers;
    const listedBy = async (handler: string, status: string) =>
      ((await (await api('GET', `/events?handler=${handler}&status=${status}&limit=200`)).json()) as { events: Array<{ id: number }> }).events.map((e) => e.id);
    const counted: Record<string, Record<string, number>> = {};
    for (const h of listed) {
      counted[h.name] = { dead: h.dead, failed: h.failed, running: h.running, pending: waitingTotal(h.waiting), parked: h.parked };
      for (const status of ['dead', 'failed', 'running', 'pending', 'parked'] as const)
        expect((await listedBy(h.name, status)).length, `${h.name} ${status}`).toBe(counted[h.name]![status]);
    }
    expect(counted).toEqual({
      limited: { dead: 2, failed: 0, running: 0, pending: 2, parked: 0 },
      plain: { dead: 3, failed: 0, running: 0, pending: 0, parked: 0 },
    });
    expect(await listedBy('plain', 'dead')).toEqual([ids[2], ids[1], ids[0]]);

    // The console's Handlers page shows the same numbers, each linked to that list.
    const { body, ...headers } = form({ token: SECRETS.admin });
    const cookie = (await app.request('/admin/login', { method: 'POST', headers, body })).headers.get('set-cookie')!.split(';')[0]!;
    const page = await (await app.request('/admin/handlers', { headers: { cookie } })).text();
    for (const name of ['plain', 'limited']) {
      const row = new RegExp(`<tr data-handler="${name}">[\\s\\S]*?</tr>`).exec(page)![0];
      expect(row).toContain(`<td class="num" data-count="dead"><a href="/admin/events?handler=${name}&status=dead">${counted[name]!.dead}</a></td>`);
      expect(row).toContain('<td class="num" data-count="failed">0</td>');
    }

    // An event's attempts are its deliveries' attempts, each handler's own; no replay shows until someone replays.
    const detail = async (id: number) =>
      (await (await api('GET', `/events/${id}`)).json()) as {
        event: { attempts: number; status: string };
        deliveries: Array<{
          handler: string;
          status: string;
          attempts: number;
          history: Array<{ outcome: string; actor: string | null; stack: string | null }>;
        }>;
      };
    const dead = await detail(ids[0]!);
    expect(dead.event).toMatchObject({ status: 'dead', attempts: 2 });
    expect(dead.deliveries.map((d) => [d.handler, d.status, d.attempts, d.history.map((a) => a.outcome)])).toEqual([
      ['limited', 'processed', 1, ['processed']],
      ['plain', 'dead', 2, ['failed', 'dead']],
    ]);
    expect(dead.deliveries[1]!.history.every((a) => a.stack?.includes('handler-counts.test.ts'))).toBe(true);
    expect(dead.deliveries.flatMap((d) => d.history).some((a) => a.outcome === 'replayed')).toBe(false);
    await api('POST', `/events/${ids[0]}/replay?handler=plain`);
    const replayed = await detail(ids[0]!);
    expect(replayed.deliveries[1]!.history.filter((a) => a.outcome === 'replayed').map((a) => a.actor)).toEqual(['admin via api']);
    expect(replayed.deliveries[0]!.history.map((a) => a.outcome)).toEqual(['processed']);
  });
});
