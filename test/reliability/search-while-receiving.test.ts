import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { SECRETS } from '../helpers/config.js';
import { reportFigures } from '../helpers/figures.js';
import { withDatabase } from '../helpers/inspect-db.js';
import { acknowledged, checkoutCompleted, sendDelivery, type SendResult } from '../helpers/signed-deliveries.js';
import { seedDataDir, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';

const STORED = 100_000;
const SECONDS = 8;

/**
 * The embedded database runs one statement at a time. A payload search that
 * reads every payload (a "contains" over everything) once held it for seconds
 * and the receivers' inserts waited past their deadline: 503s. It now reads a
 * slice of ids per statement, so the writer goes between slices.
 */
describe('the slowest payload search while deliveries arrive (embedded database)', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-search-load-'));
  let server: HookrunProcess | undefined;

  beforeAll(async () => {
    await ensureDistBuilt();
    await seedDataDir(dir);
    await withDatabase({ dataDir: dir }, async (query) => {
      await query(
        `INSERT INTO hookrun.webhook_events (source, key, type, payload, status, processed_at)
         SELECT 'payments', 'evt_old_' || g, 'invoice.paid',
                json_build_object('id', 'evt_old_' || g, 'type', 'invoice.paid', 'data', json_build_object('object', json_build_object(
                  'customer', 'cus_old' || (g % 5000), 'email', 'buyer' || g || '@example.com', 'amount_paid', g % 9000, 'note', repeat('x', 600)))),
                'processed', now()
         FROM generate_series(1, $1::int) g`,
        [STORED],
      );
    });
    server = await spawnHookrun({ dataDir: dir });
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('three searches reading every payload, over and over, refuse none of the deliveries that arrive meanwhile', async () => {
    const url = server!.url;
    const admin = { headers: { authorization: `Bearer ${SECRETS.admin}` } };
    let searching = true;
    const searches: Array<{ ms: number; status: number; partial: boolean }> = [];
    const searcher = async () => {
      while (searching) {
        const started = performance.now();
        const res = await fetch(`${url}/api/events?where=${encodeURIComponent('data.object.email ~ nobody-has-this')}&limit=50`, admin);
        const body = (await res.json()) as { searchedTo?: string };
        searches.push({ ms: performance.now() - started, status: res.status, partial: body.searchedTo !== undefined });
      }
    };
    const running = [searcher(), searcher(), searcher()];
    const results: SendResult[] = [];
    const until = Date.now() + SECONDS * 1000;
    for (let n = 0; Date.now() < until; n++) results.push(await sendDelivery(url, checkoutCompleted(`during_${n}`)));
    searching = false;
    await Promise.all(running);
    const refused = results.filter((r) => !acknowledged(r));
    reportFigures('search while receiving (embedded)', {
      stored: STORED,
      deliveries: results.length,
      refused: refused.length,
      searches: searches.length,
      searchP50Ms: Math.round(searches.map((s) => s.ms).sort((a, b) => a - b)[Math.floor(searches.length / 2)] ?? 0),
      slowestDeliveryMs: Math.round(Math.max(...results.map((r) => r.ms))),
    });
    expect(searches.length).toBeGreaterThan(3);
    expect(searches.every((s) => s.status === 200)).toBe(true);
    expect(searches.some((s) => s.partial)).toBe(true); // each stopped at its budget and said how far it read
    expect(results.length).toBeGreaterThan(10);
    expect(refused).toEqual([]);
  });
});
