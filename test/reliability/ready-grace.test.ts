import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectionRefused } from '../helpers/connection-refused.js';
import { afterAll, describe, expect, it } from 'vitest';
import { checkoutCompleted, sendDelivery } from '../helpers/signed-deliveries.js';
import { pollUntil, seedDataDir, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';

/** `/ready`'s status, or undefined when nothing answers. */
async function readyStatus(baseUrl: string): Promise<number | undefined> {
  return fetch(`${baseUrl}/ready`).then(
    (response) => response.status,
    () => undefined,
  );
}

// A load balancer (or a Kubernetes Service's endpoints) keeps sending for a moment after SIGTERM: hookrun serves on, /ready at 503, then closes.
describe('SIGTERM under the default SHUTDOWN_READY_GRACE_MS: /ready fails first, the listener closes after (PGlite)', { timeout: 90_000 }, () => {
  const started: HookrunProcess[] = [];
  let dataDir: string | undefined;
  afterAll(async () => {
    for (const proc of started) await proc.stop(5_000);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('answers /ready 503 while a webhook is still stored (200), then refuses connections and exits 0', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'hookrun-rel-grace-'));
    await seedDataDir(dataDir);
    // The spawn helper turns the grace off for every other test; this one runs with the production default.
    const hookrun = await spawnHookrun({ dataDir, env: { SHUTDOWN_READY_GRACE_MS: undefined, SCHEDULER: 'off' } });
    started.push(hookrun);
    expect(await readyStatus(hookrun.url)).toBe(200);

    hookrun.kill('SIGTERM');
    await pollUntil('/ready answers 503 after SIGTERM', 10_000, async () => ((await readyStatus(hookrun.url)) === 503 ? true : undefined));
    const body = await fetch(`${hookrun.url}/ready`).then(
      (response) => response.text(),
      () => '',
    );
    const during = await sendDelivery(hookrun.url, checkoutCompleted('during-grace'));
    expect(during, hookrun.output().slice(-2000)).toMatchObject({ status: 200 });
    expect(body).toContain('shutting down');

    await pollUntil('the listener closes once the grace is over', 30_000, async () => ((await connectionRefused(hookrun.url)) ? true : undefined), 100);
    expect(await hookrun.waitForExit(30_000)).toEqual({ code: 0, signal: null });
    expect(hookrun.output()).toContain('SHUTDOWN_READY_GRACE_MS');
  });
});
