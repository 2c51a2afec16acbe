import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { reportFigures } from '../helpers/figures.js';
import { PGBOUNCER, startPgBouncer, type Pooler } from '../helpers/pgbouncer.js';
import { effectCounts, inboxCounts, installEffectCounter, installPageInsertCounter, withDatabase } from '../helpers/inspect-db.js';
import { assertNoSecretLeaks } from '../helpers/secret-scan.js';
import { acknowledged, checkoutCompleted, clerkUserCreated, sendDelivery, type Delivery, type SendResult } from '../helpers/signed-deliveries.js';
import { pollUntil, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';
import { waitForInboxSettled } from '../helpers/worker-probe.js';

const INSTANCES = 3;
const EVENTS = 1_000;
const RESEND_SHARE = 0.3;
const CONCURRENCY = 20;
/** Scheduled ticks to watch: keep-alive every second (6-field croner expression, accepted with a warning). */
const TICKS = 6;

/** A deterministic PRNG, so a failure can be replayed with the same routing (seed in the figures). */
function mulberry32(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function isNew(result: SendResult): boolean {
  return 'status' in result && result.status === 200 && (JSON.parse(result.body) as { duplicate: boolean }).duplicate === false;
}

/**
 * How the instances reach PostgreSQL: directly, or through PgBouncer in
 * transaction mode (as Supabase's and Neon's poolers), where the first
 * instance also has the direct URL (LISTEN, migrations) and the others poll.
 */
const routes = [{ route: 'directly', pooled: false }, ...(PGBOUNCER ? [{ route: 'through PgBouncer in transaction mode', pooled: true }] : [])];

// Guarantee 3: N instances on one PostgreSQL store each event once, process it once, and run each cron tick once.
describe.skipIf(!process.env.TEST_DATABASE_URL).each(routes)('many instances on one PostgreSQL, $route', ({ route, pooled }) => {
  let database: TestDatabase;
  let configDir: string;
  let pooler: Pooler | undefined;
  const instances: HookrunProcess[] = [];

  afterAll(async () => {
    await Promise.all(instances.map((p) => p.stop(10_000)));
    await pooler?.stop();
    await database?.close();
    if (configDir) await rm(configDir, { recursive: true, force: true });
    assertNoSecretLeaks();
  });

  it(
    `${INSTANCES} instances, ${EVENTS} events sent to random instances (${RESEND_SHARE * 100}% also to another, concurrently): one row and one effect each; each cron tick once`,
    { timeout: 120_000 },
    async () => {
      database = await createPostgresDatabase();
      await withDatabase({ url: database.url }, async (query) => {
        await installEffectCounter(query);
        await installPageInsertCounter(query);
      });
      configDir = await mkdtemp(join(tmpdir(), 'hookrun-rel-many-'));
      const platformConfig = join(configDir, 'platform.json');
      await writeFile(platformConfig, JSON.stringify({ crons: [{ path: '/cron/keep-alive', schedule: '* * * * * *' }] }));

      pooler = pooled ? await startPgBouncer('transaction') : undefined;
      const reach = (i: number) =>
        pooler
          ? { databaseUrl: pooler.through(database.url!), env: { DATABASE_POOLER: 'transaction', ...(i === 0 ? { DATABASE_DIRECT_URL: database.url! } : {}) } }
          : { databaseUrl: database.url!, env: {} };
      // Start all three at once: concurrent migrations are serialised by an advisory lock.
      instances.push(
        ...(await Promise.all(
          Array.from({ length: INSTANCES }, (_, i) => {
            const { databaseUrl, env } = reach(i);
            return spawnHookrun({ databaseUrl, env: { ...env, PLATFORM_CONFIG: platformConfig } });
          }),
        )),
      );
      const startedAt = new Date();

      const seed = Date.now() % 2 ** 31;
      const random = mulberry32(seed);
      const tag = `mi${seed.toString(36)}`;
      const plan = Array.from({ length: EVENTS }, (_, i) => {
        const delivery: Delivery = i % 2 === 0 ? clerkUserCreated(`${tag}_${i}`) : checkoutCompleted(`${tag}_${i}`);
        const first = Math.floor(random() * INSTANCES);
        const again = random() < RESEND_SHARE ? (first + 1 + Math.floor(random() * (INSTANCES - 1))) % INSTANCES : undefined;
        return { delivery, targets: again === undefined ? [first] : [first, again] };
      });
      const results: SendResult[][] = new Array(EVENTS);
      const perInstance = new Array<number>(INSTANCES).fill(0);
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < plan.length) {
            const index = next++;
            const { delivery, targets } = plan[index]!;
            for (const t of targets) perInstance[t]!++;
            // The copy to the other instance goes at the same moment: the hardest race for the unique key.
            results[index] = await Promise.all(targets.map((t) => sendDelivery(instances[t]!.url, delivery)));
          }
        }),
      );
      const all = results.flat();
      expect(all.filter((r) => !acknowledged(r))).toEqual([]);
      const resends = plan.filter((p) => p.targets.length > 1).length;
      // Exactly one delivery of each event was stored as new; every other copy was answered as a duplicate.
      expect(results.map((pair) => pair.filter(isNew).length)).toEqual(new Array(EVENTS).fill(1));

      await waitForInboxSettled(instances[0]!.url, { url: database.url }, EVENTS, 60_000);
      // Let the scheduler run a few ticks on all three instances.
      await pollUntil(`${TICKS} scheduled keep-alive ticks`, 30_000, async () =>
        withDatabase({ url: database.url }, async (query) => {
          const [row] = await query<{ n: number }>(
            `SELECT count(DISTINCT scheduled_for)::int AS n FROM hookrun.cron_runs WHERE job = 'keep-alive' AND "trigger" = 'schedule' AND scheduled_for > $1`,
            [startedAt],
          );
          return row!.n >= TICKS ? true : undefined;
        }),
      );
      // The NOTIFY each instance sends itself at start came back (or, pooled, LISTEN went over the direct URL or not at all).
      expect(instances.filter((p) => p.output().includes('LISTEN does not hear NOTIFY'))).toEqual([]);
      const stops = await Promise.all(instances.map((p) => p.stop(10_000)));
      expect(stops).toEqual(new Array(INSTANCES).fill({ code: 0, signal: null }));

      const figures = await withDatabase({ url: database.url }, async (query) => {
        const ticks = await query<{ scheduled_for: Date; runs: number; statuses: string }>(
          `SELECT scheduled_for, count(*)::int AS runs, string_agg(status, ',') AS statuses FROM hookrun.cron_runs
          WHERE job = 'keep-alive' AND "trigger" = 'schedule' GROUP BY scheduled_for ORDER BY scheduled_for`,
        );
        const [pages] = await query<{ inserts: number; left: number }>(
          'SELECT (SELECT count(*)::int FROM reliability_page_inserts) AS inserts, (SELECT count(*)::int FROM hookrun.pages) AS left',
        );
        return {
          counts: await inboxCounts(query),
          users: await effectCounts(query, 'users', `user_${tag}_`),
          customers: await effectCounts(query, 'customers', `cus_${tag}_`),
          ticks,
          pages: pages!,
        };
      });
      expect(figures.counts.rows).toBe(EVENTS);
      expect(figures.counts.distinctKeys).toBe(EVENTS);
      expect(figures.counts.byStatus).toEqual({ processed: EVENTS });
      // Processed once: a single claim per event, and one state change per mirrored object.
      expect(figures.counts.maxAttempts).toBe(1);
      expect(figures.users).toEqual({ ids: EVENTS / 2, effects: EVENTS / 2, maxPerId: 1 });
      expect(figures.customers).toEqual({ ids: EVENTS / 2, effects: EVENTS / 2, maxPerId: 1 });
      // Each tick: one row (the unique claim), and the job body ran once per succeeded row.
      expect(figures.ticks.length).toBeGreaterThanOrEqual(TICKS);
      expect(figures.ticks.filter((t) => t.runs !== 1)).toEqual([]);
      const succeeded = figures.ticks.filter((t) => t.statuses === 'succeeded').length;
      expect(figures.pages.inserts).toBe(succeeded);
      expect(figures.pages.left).toBe(0);
      const seconds = figures.ticks.map((t) => new Date(t.scheduled_for).getTime() / 1000);
      const gaps = seconds.slice(1).filter((s, i) => s - seconds[i]! !== 1).length;

      reportFigures(`3 many instances (${route})`, {
        instances: INSTANCES,
        eventsSent: EVENTS,
        deliveries: all.length,
        resentToAnotherInstance: resends,
        perInstance,
        duplicatesHandled: all.length - EVENTS,
        rows: figures.counts.rows,
        lost: EVENTS - figures.counts.rows,
        processedTwice: figures.counts.reclaimed,
        userStateChanges: figures.users.effects,
        customerStateChanges: figures.customers.effects,
        cronTicks: figures.ticks.length,
        tickStatuses: Object.fromEntries(
          [...new Set(figures.ticks.map((t) => t.statuses))].map((s) => [s, figures.ticks.filter((t) => t.statuses === s).length]),
        ),
        tickGaps: gaps,
        keepAlivePageInserts: figures.pages.inserts,
        routingSeed: seed,
      });
    },
  );
});
