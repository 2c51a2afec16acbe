import { describe, expect, it } from 'vitest';
import { defineHandler } from '../../src/index.js';
import { ConfigError } from '../../src/errors.js';
import { parseFlowOptions } from '../../src/flow/options.js';
import { loadHandlers } from '../../src/project/load-project.js';
import { testConfig } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { HOOKRUN, useProjectDirs } from '../helpers/project-dir.js';
import { drain, eventRow, storeEvent, testWorker } from '../inbox/fixtures.js';

const project = useProjectDirs('hookrun-flow-project-');

/** A handler file on stripe:invoice.paid with these flow options (TypeScript source). */
const handler = (options: string, body = '') =>
  `import { defineHandler } from ${HOOKRUN};\nexport default defineHandler({ on: ['stripe:invoice.paid'], ${options}, async run(event, ctx) { ${body} } });\n`;

async function refusal(options: string): Promise<string> {
  const dir = project({ 'handlers/sync-crm.ts': handler(options) });
  const error = await loadHandlers(testConfig({ HOOKRUN_PROJECT: dir }), {}, {}).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as Error).message;
}

describe('flow options in a handler file', () => {
  it('refuses each bad option at start-up, naming the file, the option and the fix', async () => {
    expect(await refusal('concurrency: { limit: 0 }')).toMatch(/handlers\/sync-crm\.ts: concurrency\.limit must be a positive integer \(got 0\)/);
    expect(await refusal('concurrency: { limit: -2 }')).toMatch(/concurrency\.limit must be a positive integer \(got -2\)/);
    expect(await refusal("rateLimit: { limit: 10, period: 'soon' }")).toMatch(
      /sync-crm\.ts: rateLimit\.period "soon" is not a duration: write milliseconds \(a number\) or a number and a unit, like '500ms'/,
    );
    expect(await refusal("debounce: { period: '5s' } as never")).toMatch(/sync-crm\.ts: debounce needs a key/);
    expect(await refusal("concurrency: { limit: 1, key: 'customer' as never }")).toMatch(/concurrency\.key must be a function of the event/);
    expect(await refusal("order: 'key'")).toMatch(/order: 'key' needs key/);
    expect(await refusal("order: 'time' as never, key: (e) => e.id")).toMatch(/order must be 'key' \(got "time"\)/);
    expect(await refusal('concurrency: { limit: 1, key: (e) => e.id }, rateLimit: { limit: 1, period: 1000, key: (e) => e.data.object.id }')).toMatch(
      /concurrency\.key and rateLimit\.key are different functions; .* pass the same function to each option/,
    );
  });

  it('types each option by the events in `on` (checked by the typecheck)', () => {
    const typed = defineHandler({
      on: ['stripe:invoice.paid', 'stripe:invoice.payment_failed'],
      concurrency: { limit: 2, key: (event) => event.data.object.id ?? 'none' },
      rateLimit: { limit: 100, period: '1s' },
      priority: (event) => (event.type === 'invoice.payment_failed' ? 600 : 0),
      run() {},
    });
    expect(Object.keys(typed.flow).sort()).toEqual(['concurrency', 'priority', 'rateLimit']);
    const batched = defineHandler({
      on: ['stripe:invoice.paid'],
      batch: { maxSize: 5, maxWait: '1s', key: (event) => event.data.object.currency },
      run(invoices, ctx) {
        const total: number = invoices.reduce((sum, invoice) => sum + invoice.data.object.amount_paid, 0);
        if (total < 0) ctx.dead(ctx.events[0]!.id, 'negative');
      },
    });
    expect(Object.keys(batched.flow)).toEqual(['batch']);
    defineHandler({
      on: ['stripe:invoice.paid'],
      order: 'key',
      // @ts-expect-error a key is a string or a number, not the customer object Stripe may expand
      key: (event) => event.data.object.customer,
      run() {},
    });
  });

  it('reads periods as milliseconds and keeps one key for every option', () => {
    const key = (e: unknown) => String(e);
    expect(parseFlowOptions({ rateLimit: { limit: 100, period: '1s', key }, concurrency: { limit: 5 } })).toEqual({
      key,
      ordered: false,
      rate: { limit: 100, periodMs: 1000, perKey: true },
      concurrency: { limit: 5, perKey: false },
    });
    expect(parseFlowOptions({ debounce: { period: '1.5m', key, maxWait: '1h' } })?.debounce).toEqual({ periodMs: 90_000, maxWaitMs: 3_600_000 });
    expect(parseFlowOptions({})).toBeUndefined();
  });
});

describe.each(databaseKinds())('a flow-controlled project handler on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  it('runs with its typed key, and a long key is hashed, not refused', async () => {
    await testDb.db.query('CREATE TABLE IF NOT EXISTS flow_seen (handler text, customer text)');
    await testDb.db.query('TRUNCATE flow_seen');
    const dir = project({
      'handlers/sync-crm.ts': handler(
        'concurrency: { limit: 1, key: (event) => String(event.data.object.customer) }, priority: (event) => (event.data.object.amount_paid > 1000 ? 60 : 0)',
        "await ctx.db.query('INSERT INTO flow_seen VALUES ($1, $2)', [ctx.handler, String(event.data.object.customer)]);",
      ),
    });
    const env = { HOOKRUN_PROJECT: dir };
    const { registry } = await loadHandlers(testConfig(env), {}, env);
    const { worker } = testWorker(testDb.db, { handlers: registry, options: { flowHorizonMs: 0 } });
    const invoice = (id: string, customer: string) => ({
      id,
      type: 'invoice.paid',
      created: 1,
      data: { object: { id: `in_${id}`, object: 'invoice', customer, amount_paid: 2000 } },
    });
    const long = `cus_${'x'.repeat(400)}`;
    const ids = [
      await storeEvent(testDb.db, 'payments', 'invoice.paid', invoice('evt_1', 'cus_1')),
      await storeEvent(testDb.db, 'payments', 'invoice.paid', invoice('evt_2', long)),
    ];
    await drain(worker);
    for (const id of ids) expect((await eventRow(testDb.db, id)).status).toBe('processed');
    const keys = await testDb.db.query<{ flow_key: string }>(`SELECT flow_key FROM hookrun.handler_deliveries WHERE flow_key IS NOT NULL ORDER BY event_id`);
    expect(keys.map((k) => k.flow_key)).toEqual(['cus_1', expect.stringMatching(/^sha256:[0-9a-f]{64}$/)]);
    expect((await testDb.db.query('SELECT * FROM flow_seen')).length).toBe(2);
  });

  it('a batch handler gets every payload at once, typed, and ctx.dead fails one member alone', async () => {
    await testDb.db.query('CREATE TABLE IF NOT EXISTS flow_batches (ids text, amounts text)');
    await testDb.db.query('TRUNCATE flow_batches');
    const dir = project({
      'handlers/ledger.ts': `import { defineHandler } from ${HOOKRUN};
export default defineHandler({
  on: ['stripe:invoice.paid'],
  batch: { maxSize: 10, maxWait: '1s' },
  async run(invoices, ctx) {
    const amounts = invoices.map((invoice) => invoice.data.object.amount_paid);
    await ctx.db.query('INSERT INTO flow_batches VALUES ($1, $2)', [ctx.events.map((e) => e.id).join(','), amounts.join(',')]);
    for (const [i, amount] of amounts.entries()) if (amount < 0) ctx.dead(ctx.events[i].id, 'a negative amount');
  },
});
`,
    });
    const env = { HOOKRUN_PROJECT: dir };
    const { registry } = await loadHandlers(testConfig(env), {}, env);
    const { worker, clock } = testWorker(testDb.db, { handlers: registry, options: { flowHorizonMs: 0 } });
    const paid = (id: string, amount: number) =>
      storeEvent(testDb.db, 'payments', 'invoice.paid', {
        id,
        type: 'invoice.paid',
        created: 1,
        data: { object: { id: `in_${id}`, object: 'invoice', amount_paid: amount } },
      });
    const ids = [await paid('evt_a', 100), await paid('evt_b', -5), await paid('evt_c', 300)];
    await drain(worker);
    clock.advance(1000);
    await drain(worker);
    expect(await testDb.db.query('SELECT ids, amounts FROM flow_batches')).toEqual([{ ids: ids.join(','), amounts: '100,-5,300' }]);
    expect((await eventRow(testDb.db, ids[0]!)).status).toBe('processed');
    expect(await eventRow(testDb.db, ids[1]!)).toMatchObject({ status: 'dead', last_error: 'ledger dead: a negative amount' });
  });
});
