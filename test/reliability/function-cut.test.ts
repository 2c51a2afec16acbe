import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { SECRETS } from '../helpers/config.js';
import { withDatabase } from '../helpers/inspect-db.js';
import { STORE_PROFILE_CHANGES_SQL } from '../helpers/profile-changes.js';
import { REPO_ROOT, spawnHookrun } from '../helpers/spawn-hookrun.js';

const EVENTS = 40;
const HANDLER_MS = 500;
const MAX_DURATION_S = 10;
const MAX_INVOCATIONS = 8;
const FUNCTION = join(REPO_ROOT, 'test', 'reliability', 'fixtures', 'next-function.mjs');

/** A handler of 0.5 s that writes its effect in the delivery's transaction, and counts every run outside it (a call to another service). */
const handler = (runsFile: string) => `import { appendFileSync } from 'node:fs';
import { defineHandler } from ${JSON.stringify(join(REPO_ROOT, 'dist', 'index.js'))};
export default defineHandler({
  on: ['database:INSERT:profiles'],
  async run(event, ctx) {
    appendFileSync(${JSON.stringify(runsFile)}, String(event.record.id) + '\\n');
    await new Promise((resolve) => setTimeout(resolve, ${HANDLER_MS}));
    await ctx.db.query('INSERT INTO public.function_cut_effects (profile_id) VALUES ($1)', [event.record.id]);
  },
});
`;

describe.skipIf(!process.env.TEST_DATABASE_URL)('a serverless function cut at its maxDuration (hookrun/next, built)', () => {
  let test: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    await ensureDistBuilt();
    test = await createPostgresDatabase();
    dir = mkdtempSync(join(tmpdir(), 'hookrun-function-cut-'));
  });
  afterAll(async () => {
    await test?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('40 handlers of 0.5 s under a 10 s limit: every drain answers in time, each event is processed once, none dead', async () => {
    const runsFile = join(dir, 'runs.txt');
    writeFileSync(runsFile, '');
    mkdirSync(join(dir, 'project', 'handlers'), { recursive: true });
    writeFileSync(join(dir, 'project', 'handlers', 'profile-synced.ts'), handler(runsFile));
    const env = { DATABASE_URL: test.url, HOOKRUN_PROJECT: join(dir, 'project'), MAX_DURATION: String(MAX_DURATION_S), LEASE_SECONDS: '3', MAX_ATTEMPTS: '3' };

    // The first invocation migrates; then the backlog is stored.
    await (await spawnHookrun({ mainJs: FUNCTION, args: [], env })).stop();
    await withDatabase({ url: test.url }, async (query) => {
      await query('CREATE TABLE public.function_cut_effects (profile_id int PRIMARY KEY)');
      await query(STORE_PROFILE_CHANGES_SQL, [EVENTS, 'chg_cut']);
    });

    const answers: Array<{ status: number | 'cut'; claimed?: number }> = [];
    for (let invocation = 0; invocation < MAX_INVOCATIONS; invocation++) {
      const fn = await spawnHookrun({ mainJs: FUNCTION, args: [], env });
      // The platform: the drain's answer, or the end of the function at maxDuration, whichever comes first.
      const cut = new Promise<'cut'>((resolve) => setTimeout(() => resolve('cut'), MAX_DURATION_S * 1000).unref());
      const answered = fetch(`${fn.url}/cron/hookrun-drain`, { headers: { authorization: `Bearer ${SECRETS.cron}` } });
      const answer = await Promise.race([
        answered.then(async (res) => ({ status: res.status, claimed: ((await res.json()) as { claimed: number }).claimed })),
        cut,
      ]);
      fn.kill('SIGKILL');
      await fn.waitForExit(10_000);
      answers.push(answer === 'cut' ? { status: 'cut' } : answer);
      const left = await withDatabase({ url: test.url }, async (query) => {
        const [row] = await query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.handler_deliveries WHERE status <> 'processed'`);
        const [fresh] = await query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.new_events`);
        return (row?.n ?? 0) + (fresh?.n ?? 0);
      });
      if (left === 0) break;
    }

    const outcome = await withDatabase({ url: test.url }, async (query) => ({
      statuses: await query<{ status: string; n: number }>(
        `SELECT status, count(*)::int AS n FROM hookrun.handler_deliveries WHERE handler = 'profile-synced' GROUP BY status`,
      ),
      unfinished: (await query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.handler_deliveries WHERE status <> 'processed'`))[0]?.n,
      effects: (await query<{ n: number }>(`SELECT count(*)::int AS n FROM public.function_cut_effects`))[0]?.n,
    }));
    console.log(`drain answers: ${JSON.stringify(answers)}`);
    expect(
      answers.every((a) => a.status === 200),
      JSON.stringify(answers),
    ).toBe(true);
    expect(outcome.statuses).toEqual([{ status: 'processed', n: EVENTS }]);
    expect(outcome.unfinished).toBe(0);
    expect(outcome.effects).toBe(EVENTS);
    // Each invocation may lose at most the one delivery its time limit stopped; its effect outside the transaction is then repeated.
    const runs = readFileSync(runsFile, 'utf8').trim().split('\n');
    expect(runs.length).toBeGreaterThanOrEqual(EVENTS);
    expect(runs.length).toBeLessThanOrEqual(EVENTS + answers.length);
  }, 180_000);
});
