import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SECRETS } from '../helpers/config.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { reportFigures } from '../helpers/figures.js';
import { installPageInsertCounter, withDatabase } from '../helpers/inspect-db.js';
import { assertNoSecretLeaks } from '../helpers/secret-scan.js';
import { spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';

const INSTANCES = 2;
const DELIVERIES_PER_INSTANCE = 3;

// Vercel Cron may deliver one tick more than once, to any instance behind its load balancer.
describe.skipIf(!process.env.TEST_DATABASE_URL)('Vercel Cron delivering one tick to many instances (SCHEDULER=off)', () => {
  let database: TestDatabase;
  let configDir: string;
  const instances: HookrunProcess[] = [];

  afterAll(async () => {
    await Promise.all(instances.map((p) => p.stop(10_000)));
    await database?.close();
    if (configDir) await rm(configDir, { recursive: true, force: true });
    assertNoSecretLeaks();
  });

  it(
    `${INSTANCES} instances × ${DELIVERIES_PER_INSTANCE} concurrent deliveries of one tick: one run; manual calls run every time`,
    { timeout: 90_000 },
    async () => {
      database = await createPostgresDatabase();
      await withDatabase({ url: database.url }, installPageInsertCounter);
      configDir = await mkdtemp(join(tmpdir(), 'hookrun-rel-vercel-'));
      const platformConfig = join(configDir, 'platform.json');
      // Yearly: every delivery of this test belongs to one tick, whatever the wall clock says.
      await writeFile(platformConfig, JSON.stringify({ crons: [{ path: '/cron/keep-alive', schedule: '0 0 1 1 *' }] }));
      instances.push(
        ...(await Promise.all(
          Array.from({ length: INSTANCES }, () => spawnHookrun({ databaseUrl: database.url!, env: { PLATFORM_CONFIG: platformConfig, SCHEDULER: 'off' } })),
        )),
      );

      const call = (p: HookrunProcess, userAgent: string) =>
        fetch(`${p.url}/cron/keep-alive`, { headers: { authorization: `Bearer ${SECRETS.cron}`, 'user-agent': userAgent } }).then(async (r) => ({
          status: r.status,
          body: await r.text(),
          duplicate: r.headers.get('x-hookrun-run') === 'duplicate',
        }));
      const scheduled = await Promise.all(instances.flatMap((p) => Array.from({ length: DELIVERIES_PER_INSTANCE }, () => call(p, 'vercel-cron/1.0'))));
      expect(scheduled.map((r) => `${r.status} ${r.body}`)).toEqual(new Array(INSTANCES * DELIVERIES_PER_INSTANCE).fill('200 OK'));
      expect(scheduled.filter((r) => !r.duplicate)).toHaveLength(1);
      const manual = [];
      for (const p of instances) manual.push(await call(p, 'curl/8.5.0')); // one after another: keep-alive's overlap policy is skip
      expect(manual.map((r) => `${r.status} ${r.body}`)).toEqual(new Array(INSTANCES).fill('200 OK'));

      const figures = await withDatabase({ url: database.url }, async (query) => {
        const runs = await query<{ trigger: string; runs: number; ticks: number }>(
          `SELECT "trigger", count(*)::int AS runs, count(DISTINCT scheduled_for)::int AS ticks FROM hookrun.cron_runs WHERE job = 'keep-alive' GROUP BY "trigger" ORDER BY "trigger"`,
        );
        const [pages] = await query<{ n: number }>('SELECT count(*)::int AS n FROM reliability_page_inserts');
        return { runs, jobBodies: pages!.n };
      });
      expect(figures.runs).toEqual([
        { trigger: 'http', runs: INSTANCES, ticks: 0 },
        { trigger: 'schedule', runs: 1, ticks: 1 },
      ]);
      expect(figures.jobBodies).toBe(1 + INSTANCES);
      reportFigures('10 vercel cron duplicates', {
        instances: INSTANCES,
        scheduledDeliveries: scheduled.length,
        scheduledRuns: 1,
        manualRuns: INSTANCES,
        jobBodies: figures.jobBodies,
      });
    },
  );
});
