import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledged, checkoutCompleted, sendDelivery } from '../helpers/signed-deliveries.js';
import { runHookrun, seedDataDir, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';

/** Each process in a PID namespace of its own, as in its own container: there it is pid 1, and the other's pid is invisible. */
const OWN_PID_NAMESPACE = ['unshare', '--pid', '--fork', '--kill-child=SIGKILL'];
const canUnshare = (() => {
  try {
    return (
      execFileSync(OWN_PID_NAMESPACE[0]!, [...OWN_PID_NAMESPACE.slice(1), 'sh', '-c', 'echo $$'])
        .toString()
        .trim() === '1'
    );
  } catch {
    return false;
  }
})();
if (!canUnshare) {
  if (process.env.CI === 'true') throw new Error('CI=true but `unshare --pid --fork` fails: CI runs as root with util-linux, so it should work.');
  console.warn('\n  SKIPPED the PID-namespace lock test: `unshare --pid --fork` needs root (or user namespaces).\n');
}

describe.skipIf(!canUnshare)('two hookruns on one DATA_DIR from different PID namespaces (two containers on one volume)', { timeout: 120_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), 'hookrun-lock-ns-'));
  const dataDir = join(root, 'data');
  const started: HookrunProcess[] = [];
  beforeAll(() => seedDataDir(dataDir), 180_000);
  afterAll(async () => {
    for (const proc of started) await proc.stop(5_000);
    rmSync(root, { recursive: true, force: true });
  });

  it('exactly one serves, the other exits 78 naming the data dir; after kill -9 of the one serving, the next takes over', async () => {
    const first = await spawnHookrun({ dataDir, wrapper: OWN_PID_NAMESPACE, readyTimeoutMs: 60_000 });
    started.push(first);
    expect(first.output()).toContain('"pid":1,'); // pid 1 in its namespace: the pid-file lock took this for its own pid, i.e. stale

    const second = await runHookrun({ dataDir, wrapper: OWN_PID_NAMESPACE, timeoutMs: 60_000 });
    expect(second.code, second.output.slice(-2000)).toBe(78);
    expect(second.output).toContain(`DATA_DIR ${dataDir} is in use by another hookrun process`);
    const stored = await sendDelivery(first.url, checkoutCompleted(`ns_${Date.now().toString(36)}`));
    expect(acknowledged(stored)).toBe(true);

    first.kill('SIGKILL'); // unshare passes it to the hookrun inside (--kill-child)
    await first.waitForExit(10_000);
    const next = await spawnHookrun({ dataDir, wrapper: OWN_PID_NAMESPACE, readyTimeoutMs: 60_000 });
    started.push(next);
    // The first write after a kill -9 may wait on recovery: on a busy machine, longer than the helper's 10 s default.
    const afterTakeover = await sendDelivery(next.url, checkoutCompleted(`ns_next_${Date.now().toString(36)}`), { timeoutMs: 60_000 });
    expect(acknowledged(afterTakeover), `${JSON.stringify(afterTakeover)}\n${next.output().slice(-2000)}`).toBe(true);
  });
});
