import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_SECRET } from './events.js';
import { createDatabase, startHookrun } from './servers.js';
import { spread, type Spread } from './stats.js';

/** Spawn → `/ready` 200 in each situation an operator meets. */
export interface StartupFigures {
  freshDataDirMs: Spread;
  existingDataDirMs: Spread;
  /** A migrated PostgreSQL database (the usual restart / scale-out case); undefined without a database URL. */
  postgresMs?: Spread;
  /** The first start on an empty PostgreSQL database (runs the migrations). */
  postgresFreshMs?: Spread;
}

/**
 * Each repeat: a new data dir (first boot: initdb + migrations), then a
 * restart on it; on PostgreSQL a fresh database, then restarts on it.
 */
export async function runStartup(repeats: number, databaseUrl: string | undefined, progress: (line: string) => void, root?: string): Promise<StartupFigures> {
  const fresh: number[] = [];
  const existing: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const dataDir = mkdtempSync(join(tmpdir(), 'hookrun-bench-start-'));
    try {
      const first = await startHookrun({ kind: 'embedded', dataDir }, BENCH_SECRET, { root });
      await first.server.stop();
      fresh.push(first.readyMs);
      const again = await startHookrun({ kind: 'embedded', dataDir }, BENCH_SECRET, { root });
      await again.server.stop();
      existing.push(again.readyMs);
      progress(`start-up${root ? ` (${root})` : ''} embedded: fresh ${first.readyMs.toFixed(0)} ms, existing ${again.readyMs.toFixed(0)} ms`);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  const figures: StartupFigures = { freshDataDirMs: spread(fresh), existingDataDirMs: spread(existing) };
  if (!databaseUrl) return figures;
  const database = await createDatabase(databaseUrl, 'start');
  try {
    const pgFresh: number[] = [];
    const pgExisting: number[] = [];
    const first = await startHookrun({ kind: 'postgres', url: database.url }, BENCH_SECRET, { root });
    await first.server.stop();
    pgFresh.push(first.readyMs);
    for (let i = 0; i < repeats; i++) {
      const again = await startHookrun({ kind: 'postgres', url: database.url }, BENCH_SECRET, { root });
      await again.server.stop();
      pgExisting.push(again.readyMs);
    }
    progress(
      `start-up${root ? ` (${root})` : ''} postgres: fresh ${first.readyMs.toFixed(0)} ms, migrated ${pgExisting.map((ms) => ms.toFixed(0)).join(', ')} ms`,
    );
    return { ...figures, postgresMs: spread(pgExisting), postgresFreshMs: spread(pgFresh) };
  } finally {
    await database.drop();
  }
}
