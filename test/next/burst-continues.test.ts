import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNextRoute, type NextRoute } from '../../src/next/route.js';
import { CONTINUE_HEADER } from '../../src/next/continue-drain.js';
import { buildSample } from '../../src/webhooks/samples.js';
import { SECRETS } from '../helpers/config.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { pollUntil } from '../helpers/poll.js';
import { STORE_PROFILE_CHANGES_SQL } from '../helpers/profile-changes.js';
import { HOOKRUN, useProjectDirs } from '../helpers/project-dir.js';

const BACKLOG = 40;

/** A handler of 100 ms: 40 of them are 4 s of work, more than one pass of a 5 s function holds. */
const SLOW_HANDLER = `import { defineHandler } from ${HOOKRUN};
export default defineHandler({
  on: ['database:INSERT:profiles'],
  async run(event, ctx) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    await ctx.db.query('INSERT INTO public.burst_effects (profile_id) VALUES ($1)', [event.record.id]);
  },
});
`;

describe.skipIf(!process.env.TEST_DATABASE_URL)('a burst inside Next.js drains without waiting for the schedule', () => {
  const projectDir = useProjectDirs('hookrun-burst-');
  let testDb: TestDatabase;
  let server: ServerType | undefined;
  const drainCalls: Array<string | null> = [];
  beforeAll(async () => {
    testDb = await createPostgresDatabase();
  });
  afterAll(async () => {
    server?.close();
    await testDb?.close();
  });

  it('a pass that ends with work left calls the drain route itself, pass after pass, until the backlog is empty', async () => {
    const project = projectDir({ 'handlers/profile-synced.ts': SLOW_HANDLER });
    const tasks: Promise<unknown>[] = [];
    const route: NextRoute = createNextRoute({
      basePath: '/api',
      maxDuration: 5,
      processBudgetMs: 500,
      project,
      after: (task) => void tasks.push(task()),
      env: { DATABASE_URL: testDb.url!, DATABASE_WEBHOOK_SECRET: SECRETS.database, CRON_SECRET: SECRETS.cron, LOG_LEVEL: 'silent' },
    });
    const port = await new Promise<number>((resolve) => {
      server = serve(
        {
          fetch: (request) => {
            if (new URL(request.url).pathname === '/api/cron/hookrun-drain') drainCalls.push(request.headers.get(CONTINUE_HEADER));
            return route[request.method as keyof NextRoute](request);
          },
          hostname: '127.0.0.1',
          port: 0,
        },
        (info) => resolve(info.port),
      );
    });
    const base = `http://127.0.0.1:${port}/api`;
    // The first request starts hookrun (and migrates); then the burst is in the inbox.
    expect((await fetch(`${base}/health`)).status).toBe(200);
    await testDb.db.query('CREATE TABLE public.burst_effects (profile_id int PRIMARY KEY)');
    await testDb.db.query(STORE_PROFILE_CHANGES_SQL, [BACKLOG, 'chg_burst']);

    const stored = await fetch(`${base}/webhooks/database`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRETS.database}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...buildSample('database', 'INSERT'), record: { id: BACKLOG + 1 } }),
    });
    expect(stored.status).toBe(200);

    // No one calls the drain: the passes call it themselves.
    const done = await pollUntil('every change processed', 60_000, async () => {
      const [row] = await testDb.db.query<{ n: number }>('SELECT count(*)::int AS n FROM public.burst_effects');
      return row!.n === BACKLOG + 1 ? row!.n : undefined;
    });
    expect(done).toBe(BACKLOG + 1);
    expect(drainCalls.length).toBeGreaterThan(0);
    expect(drainCalls).toEqual(drainCalls.map((_, i) => String(i + 1)));
    await pollUntil('the last pass ends', 10_000, async () => ((await Promise.allSettled(tasks)).length === tasks.length ? true : undefined));
    const [left] = await testDb.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.handler_deliveries WHERE status <> 'processed'`);
    expect(left!.n).toBe(0);
  }, 90_000);
});
