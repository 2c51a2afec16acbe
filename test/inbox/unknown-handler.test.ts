import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { HandlerRegistry } from '../../src/deliveries/registry.js';
import { claimInbox } from '../../src/inbox/claim.js';
import { listHandlerOverviews } from '../../src/inbox/handler-overview.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { deliveryRows, drain, eventRow, storeEvent, testWorker } from './fixtures.js';

describe.each(databaseKinds())('a handler renamed while its deliveries wait, on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  it('its delivery waits, shown as not loaded, and runs once the handler is back; the other handler is not held', async () => {
    const ran: string[] = [];
    const registry = (names: string[]) => {
      const r = new HandlerRegistry();
      for (const name of names) r.on('test', 'order', async ({ event }) => void ran.push(`${name} ${event.id}`), { name, isolated: true });
      return r;
    };
    const before = registry(['audit', 'sync-crm']);
    const clock = new ManualClock(Date.now());
    const id = await storeEvent(testDb.db, 'test', 'order', {});
    // An instance of the old release turns it into deliveries for both handlers, and stops before running them.
    await claimInbox(testDb.db, { handlers: before, inline: [], paused: new Set(before.names()), now: clock.now(), leaseMs: 30_000, limit: 10 });

    // The new release renamed sync-crm: its delivery waits; audit runs.
    const after = registry(['audit']);
    await drain(testWorker(testDb.db, { handlers: after, clock }).worker);
    expect(ran).toEqual([`audit ${id}`]);
    expect((await deliveryRows(testDb.db, id)).map((d) => `${d.handler} ${d.status}`)).toEqual(['audit processed', 'sync-crm pending']);
    expect((await eventRow(testDb.db, id)).status).toBe('pending');
    const listed = await listHandlerOverviews(testDb.db, after, clock.now());
    expect(listed.find((h) => h.name === 'sync-crm')).toMatchObject({ registered: false, waiting: { ready: 1 } });

    // Back again (the file restored): it runs, and the event is done.
    await drain(testWorker(testDb.db, { handlers: before, clock }).worker);
    expect(ran).toEqual([`audit ${id}`, `sync-crm ${id}`]);
    expect((await eventRow(testDb.db, id)).status).toBe('processed');
  });
});
