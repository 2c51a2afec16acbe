import { describe, expect, it } from 'vitest';
import { loadAllJobs } from '../../src/cron/registry.js';
import { listAttempts } from '../../src/db/events.js';
import { ConfigError } from '../../src/errors.js';
import { loadHandlers } from '../../src/project/load-project.js';
import { startService } from '../../src/service.js';
import { createCaptureLogger } from '../helpers/capture-logger.js';
import { testConfig } from '../helpers/config.js';
import { createPgliteDatabase, databaseKinds, useTestDatabase } from '../helpers/db.js';
import { HOOKRUN, useProjectDirs } from '../helpers/project-dir.js';
import { drain, eventRow, storeEvent, testWorker } from '../inbox/fixtures.js';

const project = useProjectDirs();

const handler = (on: string[], body = '', extra = '') =>
  `import { defineHandler } from ${HOOKRUN};\nexport default defineHandler({ on: ${JSON.stringify(on)}, ${extra} async run(event, ctx) { ${body} } });\n`;

async function failure(files: Record<string, string>, env: Record<string, string> = {}): Promise<string> {
  const dir = project(files);
  const error = await loadHandlers(testConfig({ HOOKRUN_PROJECT: dir, ...env }), {}, env).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as Error).message;
}

describe("a project's handlers/ folder", () => {
  it('refuses each broken handler file with its name and the fix', async () => {
    expect(await failure({ 'handlers/not-one.ts': 'export default { run() {} };\n' })).toMatch(/handlers\/not-one\.ts: must `export default defineHandler/);
    expect(await failure({ 'handlers/typo.ts': handler(['stripe:invoice.payed']) })).toMatch(
      /typo\.ts: "stripe:invoice\.payed": "invoice\.payed" is not a Stripe event type/,
    );
    expect(await failure({ 'handlers/nobody.ts': handler(['acme:thing.done']) })).toMatch(/nobody\.ts: "acme:thing\.done": no provider "acme"/);
    expect(await failure({ 'handlers/paddle.ts': handler(['paddle:transaction.completed']) })).toMatch(
      /receives stripe events here; set PAYMENTS_PROVIDER=paddle to receive paddle events, or serve a project without this handler \(hookrun start --project <dir>\)/,
    );
    expect(await failure({ 'handlers/twice.ts': handler(['clerk:user.created']), 'handlers/twice.js': handler(['clerk:user.created']) })).toMatch(
      /a second file for handler "twice"/,
    );
    expect(await failure({ 'handlers/stripe-mirror.ts': handler(['stripe:invoice.paid']) })).toMatch(/"stripe-mirror" is the name of a shipped handler/);
    expect(await failure({ 'handlers/needs-key.ts': handler(['clerk:user.created'], '', "env: ['RESEND_API_KEY'],") })).toMatch(
      /needs-key\.ts: needs RESEND_API_KEY; set it/,
    );
    expect(await failure({ 'handlers/Bad_Name.ts': handler(['clerk:user.created']) })).toMatch(/rename it to lowercase letters/);
    expect(await failure({ 'handlers/broken.ts': 'export default defineHandler({ on: [' })).toMatch(/broken\.ts: cannot be loaded/);
    expect(await failure({ 'package.json': JSON.stringify({ dependencies: { hookrun: '1' } }) })).toMatch(/no jobs\/ or handlers\/ folder/);
  });

  it('start-up refuses an action on a GitHub event that has none, as the compiler does, naming the file and the name to use', async () => {
    const dir = project({ 'handlers/on-push.ts': handler(['github:push.created']) });
    const testDb = await createPgliteDatabase();
    try {
      const { log } = createCaptureLogger('start-up with github:push.created');
      const options = { log, db: testDb.db, http: false, worker: false, scheduler: false, background: false };
      const error = await startService(testConfig({ HOOKRUN_PROJECT: dir }), options).then(
        (service) => service.stop(),
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/on-push\.ts: "github:push\.created": GitHub's "push" event has no actions\. Did you mean github:push\?/);
    } finally {
      await testDb.close();
    }
  });

  it('loads jobs/ beside the shipped jobs, a project job replacing a shipped one', async () => {
    const dir = project({
      'jobs/nightly-report.ts': `import { defineJob } from ${HOOKRUN};\nexport default defineJob({ run() {} });\n`,
      'jobs/keep-alive.ts': `import { defineJob } from ${HOOKRUN};\nexport default defineJob({ description: 'mine', run() {} });\n`,
    });
    const jobs = await loadAllJobs(dir);
    expect([...jobs.keys()].filter((name) => !name.startsWith('reconcile-')).sort()).toEqual(['keep-alive', 'nightly-report']);
    expect(jobs.has('reconcile-payments')).toBe(true);
    expect(jobs.get('keep-alive')!.description).toBe('mine');
  });
});

describe.each(databaseKinds())('project handlers run by the worker on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  it('two files on one Stripe type and the shipped mirror each run once; a database handler sees only its table', async () => {
    await testDb.db.query('CREATE TABLE IF NOT EXISTS project_seen (handler text, detail text)');
    await testDb.db.query('TRUNCATE project_seen');
    const record = (detail: string) => `await ctx.db.query('INSERT INTO project_seen VALUES ($1, $2)', [ctx.handler, ${detail}]);`;
    const dir = project({
      'handlers/notify-sales.ts': handler(
        ['stripe:customer.subscription.updated'],
        record('event.data.object.status + " " + ctx.attempt + " " + ctx.env.SALES_CHANNEL'),
        "env: ['SALES_CHANNEL'],",
      ),
      'handlers/audit.ts': handler(['stripe:customer.subscription.updated', 'database:INSERT:orders'], record('event.type')),
    });
    const env = { HOOKRUN_PROJECT: dir, SALES_CHANNEL: '#sales' };
    const { registry } = await loadHandlers(testConfig(env), {}, env);
    const { worker } = testWorker(testDb.db, { handlers: registry });
    const subscription = {
      id: 'sub_1',
      object: 'subscription',
      customer: 'cus_1',
      status: 'active',
      created: 1,
      items: { data: [] },
      cancel_at_period_end: false,
    };
    const id = await storeEvent(testDb.db, 'payments', 'customer.subscription.updated', {
      id: 'evt_1',
      type: 'customer.subscription.updated',
      created: 2,
      data: { object: subscription },
    });
    const order = await storeEvent(testDb.db, 'database', 'INSERT', { type: 'INSERT', schema: 'public', table: 'orders', record: { id: 1 }, old_record: null });
    const other = await storeEvent(testDb.db, 'database', 'INSERT', {
      type: 'INSERT',
      schema: 'public',
      table: 'profiles',
      record: { id: 1 },
      old_record: null,
    });
    await drain(worker);
    expect((await eventRow(testDb.db, id)).status).toBe('processed');
    const seen = (await testDb.db.query<{ handler: string; detail: string }>('SELECT handler, detail FROM project_seen ORDER BY handler, detail')).map(
      (r) => `${r.handler}: ${r.detail}`,
    );
    expect(seen).toEqual(['audit: INSERT', 'audit: customer.subscription.updated', 'notify-sales: active 1 #sales']);
    expect((await listAttempts(testDb.db, id)).map((a) => a.handler).sort()).toEqual(['audit', 'notify-sales', 'stripe-mirror']);
    expect((await listAttempts(testDb.db, order)).map((a) => a.handler).sort()).toEqual(['audit', 'database-changes']);
    expect((await listAttempts(testDb.db, other)).map((a) => a.handler)).toEqual(['database-changes']);
  });
});
