import { describe, expect, it } from 'vitest';
import { SECRETS } from '../helpers/config.js';
import { pgliteOnly, useTestDatabase } from '../helpers/db.js';
import { useProjectDirs } from '../helpers/project-dir.js';
import { storeEvent, stripeEvent } from '../inbox/fixtures.js';
import { createToolsApp } from '../tools/tools-app.js';
import { handlerFile, startService } from './support.js';

const project = useProjectDirs('hookrun-console-steps-');

describe.each(pgliteOnly())("the console's event page lists each delivery's steps ($name)", (kind) => {
  const testDb = useTestDatabase(kind);

  it('each step with its status and attempts; a sleep with its end', async () => {
    const { db } = testDb;
    const body = `await ctx.step('create-account', () => ({ id: 'acct_1' }));\nawait ctx.sleep('cool-off', '2h');`;
    const service = await startService(db, project({ 'handlers/checkout.ts': handlerFile('stripe:checkout.session.completed', body) }));
    const id = await storeEvent(db, 'payments', 'checkout.session.completed', stripeEvent('checkout.session.completed', 1, { id: 'cs_1', customer: 'cus_1' }));
    await service.drain();
    const tools = await createToolsApp(db, {}, service.clock);
    const login = await tools.app.request('/admin/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: SECRETS.admin }).toString(),
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const page = await (await tools.app.request(`/admin/events/${id}`, { headers: { cookie } })).text();
    const table = /<table class="steps" data-handler="checkout">([\s\S]*?)<\/table>/.exec(page)?.[1];
    expect(table, page.slice(0, 2000)).toBeDefined();
    const rows = [...table!.split('<tbody>')[1]!.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) =>
      m[1]!
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    );
    expect(rows[0]).toMatch(/^create-account succeeded 1 \d+$/);
    expect(rows[1]).toMatch(/^cool-off sleeping 1 0 sleeping until /);
  });
});
