import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/client.js';
import { BENCH_SECRET } from './events.js';
import { ROOT, createDatabase, startHookrun, type Storage } from './servers.js';
import { percentile } from './stats.js';

/** Cron start lag over a run of ticks, or why it could not be measured. */
export type CronFigures =
  | { available: false; reason: string }
  | { available: true; storage: Storage['kind']; ticks: number; skipped: number; lagP50Ms: number; lagP99Ms: number; lagMaxMs: number };

/** The scheduler module the cron figure depends on. */
const TICKER_MODULE = 'src/cron/ticker.ts';

/**
 * Lag between a tick's scheduled time and its run's start, from the
 * `cron_runs` rows of a real `hookrun start` whose platform.json runs
 * keep-alive every second (a 6-field expression: accepted, with a warning
 * that Vercel wants 5 fields) for `seconds`.
 */
export async function runCron(seconds: number, databaseUrl: string | undefined, progress: (line: string) => void): Promise<CronFigures> {
  if (!existsSync(join(ROOT, TICKER_MODULE))) return { available: false, reason: `${TICKER_MODULE} (the scheduler) does not exist yet` };
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-bench-cron-'));
  const database = databaseUrl ? await createDatabase(databaseUrl, 'cron') : undefined;
  const storage: Storage = database ? { kind: 'postgres', url: database.url } : { kind: 'embedded', dataDir: join(dir, 'data') };
  try {
    const platform = join(dir, 'platform.json');
    writeFileSync(platform, JSON.stringify({ crons: [{ path: '/cron/keep-alive', schedule: '* * * * * *' }] }));
    const { server } = await startHookrun(storage, BENCH_SECRET, { env: { PLATFORM_CONFIG: platform } });
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    await server.stop();
    const db = await openDatabase(storage.kind === 'embedded' ? { dataDir: storage.dataDir } : { databaseUrl: storage.url });
    try {
      const rows = await db.query<{ status: string; lag_ms: number }>(
        `SELECT status, extract(epoch FROM started_at - scheduled_for) * 1000 AS lag_ms FROM hookrun.cron_runs WHERE trigger = 'schedule' AND scheduled_for IS NOT NULL`,
      );
      const lags = rows.filter((r) => r.status !== 'skipped').map((r) => Number(r.lag_ms));
      if (lags.length === 0) return { available: false, reason: `no scheduled run in ${seconds} s: is the scheduler wired into \`hookrun start\`?` };
      progress(`cron ${storage.kind}: ${lags.length} ticks, lag p50 ${percentile(lags, 50).toFixed(1)} ms, p99 ${percentile(lags, 99).toFixed(1)} ms`);
      return {
        available: true,
        storage: storage.kind,
        ticks: lags.length,
        skipped: rows.length - lags.length,
        lagP50Ms: percentile(lags, 50),
        lagP99Ms: percentile(lags, 99),
        lagMaxMs: Math.max(...lags),
      };
    } finally {
      await db.close();
    }
  } finally {
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}
