import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresDatabase } from '../helpers/db.js';
import { reportFigures } from '../helpers/figures.js';
import { effectCounts, inboxCounts, installEffectCounter, withDatabase } from '../helpers/inspect-db.js';
import { assertNoSecretLeaks } from '../helpers/secret-scan.js';
import { acknowledged, checkoutCompleted, clerkUserCreated, sendAll, type Delivery, type SendResult } from '../helpers/signed-deliveries.js';
import { seedDataDir, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';
import { waitForInboxSettled } from '../helpers/worker-probe.js';

const EVENTS = 3_000;
const CONCURRENCY = 20;
const KILL_AFTER_ACKS = 1_000;

interface Target {
  spawnEnv: { dataDir?: string; databaseUrl?: string };
  inspect: { dataDir?: string; url?: string };
  cleanup(): Promise<void>;
}

async function embeddedTarget(): Promise<Target> {
  const dataDir = await mkdtemp(join(tmpdir(), 'hookrun-rel-crash-'));
  await seedDataDir(dataDir);
  return { spawnEnv: { dataDir }, inspect: { dataDir }, cleanup: () => rm(dataDir, { recursive: true, force: true }) };
}

async function postgresTarget(): Promise<Target> {
  // Open until cleanup, which closes it and then drops the database (a handle closed twice throws before the drop).
  const test = await createPostgresDatabase();
  return {
    spawnEnv: { databaseUrl: test.url! },
    inspect: { url: test.url! },
    cleanup: () => test.close(),
  };
}

const kinds = [{ name: 'pglite', make: embeddedTarget }, ...(process.env.TEST_DATABASE_URL ? [{ name: 'postgres', make: postgresTarget }] : [])];

function isDuplicate(result: SendResult): boolean {
  return 'status' in result && result.status === 200 && (JSON.parse(result.body) as { duplicate?: boolean }).duplicate === true;
}

// Guarantee 1: kill -9 under load loses no acknowledged event, and the provider's re-sends are stored once.
describe.each(kinds)('crash under load ($name)', ({ name, make }) => {
  const started: HookrunProcess[] = [];
  afterAll(async () => {
    for (const proc of started) await proc.stop(5_000);
    assertNoSecretLeaks();
  });

  it(`stores exactly ${EVENTS} events after kill -9 mid-stream and re-sends`, { timeout: 150_000 }, async () => {
    const target = await make();
    try {
      await withDatabase(target.inspect, installEffectCounter);
      const tag = `${name}${Date.now().toString(36)}`;
      const deliveries: Delivery[] = Array.from({ length: EVENTS }, (_, i) =>
        i % 2 === 0 ? clerkUserCreated(`${tag}_${i}`) : checkoutCompleted(`${tag}_${i}`),
      );

      const first = await spawnHookrun({ ...target.spawnEnv, env: { LEASE_SECONDS: '2' } });
      started.push(first);
      let acks = 0;
      const round1 = await sendAll(first.url, deliveries, {
        concurrency: CONCURRENCY,
        onResult: (_, result) => {
          if (acknowledged(result) && ++acks === KILL_AFTER_ACKS) first.kill('SIGKILL');
        },
      });
      expect(await first.waitForExit(10_000)).toMatchObject({ signal: 'SIGKILL' });
      const acked1 = round1.map(acknowledged);
      const acknowledgedKeys = deliveries.filter((_, i) => acked1[i]).map((d) => d.key);
      // Killed mid-stream: some acknowledged, some not.
      expect(acknowledgedKeys.length).toBeGreaterThanOrEqual(KILL_AFTER_ACKS);
      expect(acknowledgedKeys.length).toBeLessThan(EVENTS);
      const non2xx = round1.filter((r) => 'status' in r && !acknowledged(r));
      // Before the kill every answer was a 2xx: nothing was refused for a reason of ours.
      expect(non2xx.filter((r) => 'status' in r && r.status !== 503)).toEqual([]);

      // The re-sends are what is judged here, not how fast a busy machine commits them: a generous DB_TIMEOUT_MS, so a
      // re-send is never answered 503 "did not confirm in time" because the test machine is loaded.
      const second = await spawnHookrun({ ...target.spawnEnv, env: { LEASE_SECONDS: '2', DB_TIMEOUT_MS: '15000' } });
      started.push(second);
      const retryIndexes = deliveries.map((_, i) => i).filter((i) => !acked1[i]);
      const round2 = await sendAll(
        second.url,
        retryIndexes.map((i) => deliveries[i]!),
        { concurrency: CONCURRENCY },
      );
      expect(round2.filter((r) => !acknowledged(r))).toEqual([]);
      const storedButUnacknowledged = round2.filter(isDuplicate).length;

      const processing = await waitForInboxSettled(second.url, target.inspect, EVENTS, 60_000);
      expect(await second.stop(10_000)).toEqual({ code: 0, signal: null });

      const figures = await withDatabase(target.inspect, async (query) => {
        const counts = await inboxCounts(query);
        const keys = new Set((await query<{ key: string }>('SELECT key FROM hookrun.webhook_events')).map((r) => r.key));
        const lost = acknowledgedKeys.filter((key) => !keys.has(key)).length;
        const users = await query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.users WHERE id LIKE $1`, [`user_${tag}_%`]);
        const customers = await query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.customers WHERE id LIKE $1`, [`cus_${tag}_%`]);
        const userEffects = await effectCounts(query, 'users', `user_${tag}_`);
        const customerEffects = await effectCounts(query, 'customers', `cus_${tag}_`);
        return { counts, lost, users: users[0]!.n, customers: customers[0]!.n, userEffects, customerEffects };
      });
      expect(figures.counts.rows).toBe(EVENTS);
      expect(figures.counts.distinctKeys).toBe(EVENTS);
      expect(figures.lost).toBe(0);
      expect(figures.counts.byStatus).toEqual({ processed: EVENTS });
      // Each handler's side effect exactly once: one mirrored user per user.created, one customer per checkout.
      expect(figures.users).toBe(EVENTS / 2);
      expect(figures.customers).toBe(EVENTS / 2);
      // Side effects, not rows: every user and customer was written once; a re-run after the crash changed nothing.
      expect(figures.userEffects).toEqual({ ids: EVENTS / 2, effects: EVENTS / 2, maxPerId: 1 });
      expect(figures.customerEffects).toEqual({ ids: EVENTS / 2, effects: EVENTS / 2, maxPerId: 1 });
      reportFigures(`1 crash under load (${name})`, {
        eventsSent: EVENTS,
        concurrency: CONCURRENCY,
        crashes: 1,
        acknowledgedBeforeCrash: acknowledgedKeys.length,
        resent: retryIndexes.length,
        storedButUnacknowledged,
        rows: figures.counts.rows,
        lost: figures.lost,
        byStatus: figures.counts.byStatus,
        reclaimedAfterLease: figures.counts.reclaimed,
        usersMirrored: figures.users,
        userStateChanges: figures.userEffects.effects,
        customerStateChanges: figures.customerEffects.effects,
        customersMirrored: figures.customers,
        processingMs: processing.ms,
      });
    } finally {
      await target.cleanup();
    }
  });
});
