import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNextRoute } from '../../src/next/route.js';
import { buildSample } from '../../src/webhooks/samples.js';
import { SECRETS } from '../helpers/config.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { pollUntil } from '../helpers/poll.js';
import { HOOKRUN, useProjectDirs } from '../helpers/project-dir.js';

/** A step, a one-second sleep, and a step: the second step needs a pass after the sleep. */
const SLEEPY_HANDLER = `import { defineHandler } from ${HOOKRUN};
export default defineHandler({
  on: ['database:INSERT:profiles'],
  async run(event, ctx) {
    await ctx.step('first', () => ctx.db.query("INSERT INTO public.nap_steps VALUES ('first')").then(() => 1));
    await ctx.sleep('nap', '1s');
    await ctx.step('second', () => ctx.db.query("INSERT INTO public.nap_steps VALUES ('second')").then(() => 2));
  },
});
`;

describe.skipIf(!process.env.TEST_DATABASE_URL)('a sleeping delivery inside Next.js', () => {
  const projectDir = useProjectDirs('hookrun-next-sleep-');
  let testDb: TestDatabase;
  beforeAll(async () => {
    testDb = await createPostgresDatabase();
    await testDb.db.query('CREATE TABLE public.nap_steps (step text)');
  });
  afterAll(async () => {
    await testDb?.close();
  });

  it('is picked up by the drain route once its sleep is over, each step once', async () => {
    const tasks: Promise<unknown>[] = [];
    const route = createNextRoute({
      basePath: '/api',
      project: projectDir({ 'handlers/nap.ts': SLEEPY_HANDLER }),
      after: (task) => void tasks.push(task()),
      env: { DATABASE_URL: testDb.url!, DATABASE_WEBHOOK_SECRET: SECRETS.database, CRON_SECRET: SECRETS.cron, LOG_LEVEL: 'silent' },
    });
    const stored = await route.POST(
      new Request('http://app.example/api/webhooks/database', {
        method: 'POST',
        headers: { authorization: `Bearer ${SECRETS.database}`, 'content-type': 'application/json' },
        body: JSON.stringify(buildSample('database', 'INSERT')),
      }),
    );
    expect(stored.status).toBe(200);
    await Promise.all(tasks); // the pass after the answer: the first step, then the sleep
    const steps = async () => (await testDb.db.query<{ step: string }>('SELECT step FROM public.nap_steps ORDER BY step')).map((r) => r.step);
    expect(await steps()).toEqual(['first']);

    const drain = () => route.GET(new Request('http://app.example/api/cron/hookrun-drain', { headers: { authorization: `Bearer ${SECRETS.cron}` } }));
    await pollUntil(
      'a drain after the sleep runs the second step',
      15_000,
      async () => {
        expect((await drain()).status).toBe(200);
        return (await steps()).length === 2 ? true : undefined;
      },
      250,
    );
    expect(await steps()).toEqual(['first', 'second']);
    const [delivery] = await testDb.db.query<{ status: string }>(`SELECT status FROM hookrun.handler_deliveries WHERE handler = 'nap'`);
    expect(delivery!.status).toBe('processed');
  }, 60_000);
});
