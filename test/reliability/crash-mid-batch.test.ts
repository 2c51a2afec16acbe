import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresDatabase } from '../helpers/db.js';
import { reportFigures } from '../helpers/figures.js';
import { effectCounts, inboxCounts, installEffectCounter, withDatabase } from '../helpers/inspect-db.js';
import { assertNoSecretLeaks } from '../helpers/secret-scan.js';
import { pollUntil, seedDataDir, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';
import { waitForInboxSettled } from '../helpers/worker-probe.js';

const BACKLOG = 2_000;
const LEASE_SECONDS = 2;
const BASE_MS = Date.UTC(2026, 0, 1);

/**
 * A backlog as receivers would have stored it: Clerk user.created events
 * (mirror ids `user_<tag>_<n>`), every 10th a Supabase change (its handler
 * logs at debug level, so the secret scan also covers handler logs).
 */
const BACKLOG_SQL = `
  WITH stored AS (
  INSERT INTO hookrun.webhook_events (source, key, type, payload)
  SELECT CASE WHEN g % 10 = 1 THEN 'database' ELSE 'auth' END,
         CASE WHEN g % 10 = 1 THEN 'chg_' ELSE 'msg_' END || $1 || '_' || g,
         CASE WHEN g % 10 = 1 THEN 'INSERT' ELSE 'user.created' END,
         CASE WHEN g % 10 = 1
           THEN jsonb_build_object('type', 'INSERT', 'schema', 'public', 'table', 'profiles', 'record', jsonb_build_object('id', g), 'old_record', null)
           ELSE jsonb_build_object('object', 'event', 'type', 'user.created', 'timestamp', $3::bigint + g,
             'data', jsonb_build_object('id', 'user_' || $1 || '_' || g, 'object', 'user', 'first_name', 'Backlog', 'last_name', g::text,
               'primary_email_address_id', 'idn_' || g,
               'email_addresses', jsonb_build_array(jsonb_build_object('id', 'idn_' || g, 'email_address', g || '@example.com')),
               'created_at', $3::bigint + g, 'updated_at', $3::bigint + g))
         END
  FROM generate_series(1, $2::int) g ORDER BY g
  RETURNING id)
  INSERT INTO hookrun.new_events (event_id) SELECT id FROM stored`;
const MAX_CRASHES = 3;

interface Target {
  spawnEnv: { dataDir?: string; databaseUrl?: string };
  inspect: { dataDir?: string; url?: string };
  /** Send SIGKILL at a moment the worker holds claims. */
  killMidBatch(victim: HookrunProcess): Promise<void>;
  cleanup(): Promise<void>;
}

/**
 * The embedded database has one process, so nothing can look inside while
 * the victim runs: watch its log instead, and kill at the first handler's
 * debug line (every 10th backlog event is a database change, and its handler
 * logs "database change recorded"), when a batch is claimed and running. A
 * fixed delay after start-up missed the drain on a loaded machine.
 */
async function killAtFirstHandlerLine(victim: HookrunProcess): Promise<void> {
  await pollUntil(
    'a handler\'s "database change recorded" log line',
    60_000,
    () => (victim.output().includes('database change recorded') || victim.exited ? true : undefined),
    2,
  );
  victim.kill('SIGKILL');
}

/**
 * PostgreSQL drains this backlog in a few hundred milliseconds, faster than
 * any fixed delay can aim at, so watch the claims from another connection and
 * kill as soon as some are held.
 */
async function killWhenClaimsAreHeld(url: string, victim: HookrunProcess): Promise<void> {
  await withDatabase({ url }, async (query) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const [row] = await query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.handler_deliveries WHERE status = 'running'`);
      if ((row?.n ?? 0) > 0 || victim.exited) break;
      if (Date.now() > deadline) throw new Error('no claim seen within 60 s');
    }
  });
  victim.kill('SIGKILL');
}

const kinds = [
  {
    name: 'pglite',
    make: async (): Promise<Target> => {
      const dataDir = await mkdtemp(join(tmpdir(), 'hookrun-rel-batch-'));
      await seedDataDir(dataDir);
      return {
        spawnEnv: { dataDir },
        inspect: { dataDir },
        killMidBatch: killAtFirstHandlerLine,
        cleanup: () => rm(dataDir, { recursive: true, force: true }),
      };
    },
  },
  ...(process.env.TEST_DATABASE_URL
    ? [
        {
          name: 'postgres',
          make: async (): Promise<Target> => {
            const test = await createPostgresDatabase();
            return {
              spawnEnv: { databaseUrl: test.url! },
              inspect: { url: test.url! },
              killMidBatch: (victim) => killWhenClaimsAreHeld(test.url!, victim),
              cleanup: () => test.close().catch(() => undefined),
            };
          },
        },
      ]
    : []),
];

// Guarantee 1b: kill -9 while the worker holds claims; the claims are taken again after their lease, and no state changes twice.
describe.each(kinds)('crash while the worker is mid-batch ($name)', ({ name, make }) => {
  const started: HookrunProcess[] = [];
  afterAll(async () => {
    for (const proc of started) await proc.stop(5_000);
    assertNoSecretLeaks();
  });

  it(`recovers the claims of a killed worker after LEASE_SECONDS=${LEASE_SECONDS}, each event's effect once`, { timeout: 120_000 }, async () => {
    const target = await make();
    try {
      const tag = `mb${name}${Date.now().toString(36)}`;
      await withDatabase(target.inspect, async (query) => {
        await installEffectCounter(query);
        await query(BACKLOG_SQL, [tag, BACKLOG, BASE_MS]);
      });
      const env = { LEASE_SECONDS: String(LEASE_SECONDS), SCHEDULER: 'off', LOG_LEVEL: 'debug' };
      // kill -9 while the worker drains the backlog; a kill may land between two batches (nothing
      // claimed), so crash again, up to MAX_CRASHES times, until claims are caught in hand.
      let crashes = 0;
      let atCrash = await withDatabase(target.inspect, inboxCounts);
      const claimedAtEachCrash: number[] = [];
      while (crashes < MAX_CRASHES && (claimedAtEachCrash.at(-1) ?? 0) === 0) {
        const victim = await spawnHookrun({ ...target.spawnEnv, env, waitReady: false });
        started.push(victim);
        await target.killMidBatch(victim);
        expect(await victim.waitForExit(60_000), victim.output().slice(-3000)).toMatchObject({ signal: 'SIGKILL' });
        crashes++;
        atCrash = await withDatabase(target.inspect, inboxCounts);
        claimedAtEachCrash.push(atCrash.running);
      }
      const claimedAtCrash = claimedAtEachCrash.reduce((a, b) => a + b, 0);
      expect(claimedAtCrash).toBeGreaterThan(0);
      expect(atCrash.byStatus.processed ?? 0).toBeLessThan(BACKLOG);

      const second = await spawnHookrun({ ...target.spawnEnv, env });
      started.push(second);
      const settled = await waitForInboxSettled(second.url, target.inspect, BACKLOG, 90_000);
      expect(await second.stop(10_000)).toEqual({ code: 0, signal: null });

      const after = await withDatabase(target.inspect, async (query) => ({
        counts: await inboxCounts(query),
        effects: await effectCounts(query, 'users', `user_${tag}_`),
        users: (await query<{ n: number }>('SELECT count(*)::int AS n FROM hookrun.users WHERE id LIKE $1', [`user_${tag}_%`]))[0]!.n,
        backlogUsers: (await query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.webhook_events WHERE source = 'auth'`))[0]!.n,
      }));
      expect(after.counts.rows).toBe(BACKLOG);
      expect(after.counts.byStatus).toEqual({ processed: BACKLOG });
      expect(after.users).toBe(after.backlogUsers);
      // Only the claims held at the crash were taken again, once each.
      expect(after.counts.reclaimed).toBeLessThanOrEqual(claimedAtCrash);
      expect(after.counts.maxAttempts).toBeLessThanOrEqual(1 + crashes);
      // Each user's state changed once, whether or not its handler ran twice.
      expect(after.effects).toEqual({ ids: after.backlogUsers, effects: after.backlogUsers, maxPerId: 1 });

      reportFigures(`1b crash mid-batch (${name})`, {
        backlog: BACKLOG,
        leaseSeconds: LEASE_SECONDS,
        crashes,
        claimedAtEachCrash,
        statusAtCrash: atCrash.byStatus,
        claimedAtCrash,
        reclaimedAfterLease: after.counts.reclaimed,
        userStateChanges: after.effects.effects,
        lost: BACKLOG - (after.counts.byStatus.processed ?? 0),
        settleMsAfterRestart: settled.ms,
      });
    } finally {
      await target.cleanup();
    }
  });
});
