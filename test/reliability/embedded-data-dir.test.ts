import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportFigures } from '../helpers/figures.js';
import { inboxCounts, withDatabase } from '../helpers/inspect-db.js';
import { assertNoSecretLeaks } from '../helpers/secret-scan.js';
import { acknowledged, checkoutCompleted, sendAll, type Delivery } from '../helpers/signed-deliveries.js';
import { runHookrun, seedDataDir, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';

const EVENTS = 200;

// Guarantee 7: one process per embedded data dir; a kill -9 leaves a dir the next start opens without loss.
describe('embedded data dir (PGlite)', () => {
  let dataDir: string;
  const started: HookrunProcess[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'hookrun-rel-datadir-'));
    await seedDataDir(dataDir);
  });

  afterAll(async () => {
    for (const proc of started) await proc.stop(5_000);
    await rm(dataDir, { recursive: true, force: true });
    assertNoSecretLeaks();
  });

  it('refuses a second process on the same DATA_DIR, then recovers the stale lock of a killed one without loss', { timeout: 90_000 }, async () => {
    const first = await spawnHookrun({ dataDir });
    started.push(first);

    const second = await runHookrun({ dataDir, timeoutMs: 30_000 });
    expect(second.code).not.toBe(0);
    expect(second.code).not.toBeNull();
    expect(second.output).toContain('DATA_DIR');
    expect(second.output).toContain(dataDir);
    expect(second.output).toContain(`pid ${first.pid}`);
    // The refused process must not have disturbed the running one.
    expect((await fetch(`${first.url}/ready`)).status).toBe(200);

    const tag = `dd${Date.now().toString(36)}`;
    const deliveries: Delivery[] = Array.from({ length: EVENTS }, (_, i) => checkoutCompleted(`${tag}_${i}`));
    const results = await sendAll(first.url, deliveries, { concurrency: 10 });
    expect(results.filter(acknowledged)).toHaveLength(EVENTS);

    first.kill('SIGKILL');
    expect(await first.waitForExit(10_000)).toMatchObject({ signal: 'SIGKILL' });
    const lockPath = join(dataDir, 'hookrun.lock');
    expect(existsSync(lockPath)).toBe(true);
    expect(readFileSync(lockPath, 'utf8').trim()).toBe(String(first.pid));

    const next = await spawnHookrun({ dataDir });
    started.push(next);
    const again = await sendAll(next.url, deliveries, { concurrency: 10 });
    const duplicates = again.filter((r) => 'status' in r && r.status === 200 && JSON.parse(r.body).duplicate === true).length;
    expect(duplicates).toBe(EVENTS);
    expect(await next.stop(10_000)).toEqual({ code: 0, signal: null });
    expect(readFileSync(lockPath, 'utf8')).toBe(''); // released: the file stays (the kernel's lock is on it) and names no holder

    const counts = await withDatabase({ dataDir }, inboxCounts);
    expect(counts.rows).toBe(EVENTS);
    expect(counts.distinctKeys).toBe(EVENTS);
    reportFigures('7 embedded data dir', {
      eventsSent: EVENTS,
      crashes: 1,
      secondProcessExit: second.code,
      rowsAfterRestart: counts.rows,
      lost: EVENTS - counts.rows,
      duplicatesHandled: duplicates,
    });
  });
});
