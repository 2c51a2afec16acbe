import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNextRoute, type NextRoute } from '../../src/next/route.js';
import { buildSample } from '../../src/webhooks/samples.js';
import { SECRETS } from '../helpers/config.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { pollUntil } from '../helpers/poll.js';
import { HOOKRUN, useProjectDirs } from '../helpers/project-dir.js';

/** Each run waits until the test opens the gate (a global the test and the handler share). */
const GATED_HANDLER = `import { defineHandler } from ${HOOKRUN};
export default defineHandler({
  on: ['database:INSERT:profiles'],
  async run(event, ctx) {
    await globalThis.__joinedPassGate;
    await ctx.db.query('INSERT INTO public.joined_effects (profile_id) VALUES ($1)', [event.record.id]);
  },
});
`;

/**
 * Under a flood every answer used to hand Next.js's after() the pass that was
 * already running, so every request was held until the pass ended. An event
 * stored while a pass runs now joins it; only the answer that starts a pass
 * holds the function for it.
 */
describe.skipIf(!process.env.TEST_DATABASE_URL)('webhooks that arrive while a processing pass runs inside Next.js', () => {
  const projectDir = useProjectDirs('hookrun-joined-');
  let testDb: TestDatabase;
  beforeAll(async () => {
    testDb = await createPostgresDatabase();
  });
  afterAll(async () => {
    await testDb?.close();
  });

  it('join that pass: no after() of their own, and the pass processes them before it ends', async () => {
    let open!: () => void;
    (globalThis as { __joinedPassGate?: Promise<void> }).__joinedPassGate = new Promise<void>((resolve) => (open = resolve));
    const held: Promise<unknown>[] = [];
    const route: NextRoute = createNextRoute({
      basePath: '/api',
      project: projectDir({ 'handlers/profile-synced.ts': GATED_HANDLER }),
      after: (task) => void held.push(task()),
      env: { DATABASE_URL: testDb.url!, DATABASE_WEBHOOK_SECRET: SECRETS.database, LOG_LEVEL: 'silent' },
    });
    expect((await route.GET(new Request('http://product.example/api/health'))).status).toBe(200); // starts hookrun and migrates
    await testDb.db.query('CREATE TABLE public.joined_effects (profile_id int PRIMARY KEY)');
    const send = async (id: number) => {
      const answer = await route.POST(
        new Request('http://product.example/api/webhooks/database', {
          method: 'POST',
          headers: { authorization: `Bearer ${SECRETS.database}`, 'content-type': 'application/json' },
          body: JSON.stringify({ ...buildSample('database', 'INSERT'), record: { id } }),
        }),
      );
      expect(answer.status, await answer.clone().text()).toBe(200);
    };

    await send(1);
    expect(held).toHaveLength(1); // the first answer starts the pass, which waits in the handler
    for (let id = 2; id <= 5; id++) await send(id);
    expect(held).toHaveLength(1);

    open();
    await Promise.all(held);
    const [row] = await testDb.db.query<{ n: number }>('SELECT count(*)::int AS n FROM public.joined_effects');
    expect(row!.n).toBe(5);
    // A pass that has ended is not joined: the next answer starts one.
    await send(6);
    expect(held).toHaveLength(2);
    await pollUntil('the sixth processed', 10_000, async () => {
      const [after] = await testDb.db.query<{ n: number }>('SELECT count(*)::int AS n FROM public.joined_effects');
      return after!.n === 6 || undefined;
    });
  });
});
