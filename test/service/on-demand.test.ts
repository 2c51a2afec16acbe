import { describe, expect, it } from 'vitest';
import type { CronService } from '../../src/cron/cron-service.js';
import type { Worker } from '../../src/inbox/worker.js';
import { silentLogger } from '../../src/log.js';
import { createOnDemandProcessing } from '../../src/service-drain.js';

/** A worker whose batches are scripted: each runOnce takes the next count (0 once the script ends), after `gate` when given. */
function scriptedWorker(counts: number[], gate?: () => Promise<void>): Worker & { calls: number } {
  const worker = {
    calls: 0,
    start() {},
    wake() {},
    stop: async () => undefined,
    async runOnce() {
      worker.calls += 1;
      await gate?.();
      return counts.shift() ?? 0;
    },
  };
  return worker;
}

const cron = (due = 0) => ({ runDue: async () => due, idle: async () => true }) as unknown as CronService;

/** Processing over a worker that claims 1, then 0, then 1; its first batch waits until `release()`. */
function heldFirstBatch() {
  let release!: () => void;
  const first = new Promise<void>((resolve) => (release = resolve));
  let gateUsed = false;
  const worker = scriptedWorker([1, 0, 1], () => (gateUsed ? Promise.resolve() : ((gateUsed = true), first)));
  const onDemand = createOnDemandProcessing({ worker, cron: cron(), retention: undefined, checkAlerts: async () => undefined, log: silentLogger });
  return { worker, onDemand, release };
}

describe('processing on demand (hookrun/next after each answer, and its drain route)', () => {
  it('claims batches until none is due, and reports what it claimed', async () => {
    const worker = scriptedWorker([100, 100, 3]);
    const onDemand = createOnDemandProcessing({ worker, cron: cron(), retention: undefined, checkAlerts: async () => undefined, log: silentLogger });
    expect(await onDemand.process(10_000)).toMatchObject({ claimed: 203, cronRunsStarted: 0, budgetExhausted: false });
    expect(worker.calls).toBe(4);
  });

  it('stops claiming when the budget is spent, and says work is left', async () => {
    const worker = scriptedWorker(
      Array.from({ length: 1000 }, () => 1),
      () => new Promise((resolve) => setTimeout(resolve, 5)),
    );
    const onDemand = createOnDemandProcessing({ worker, cron: cron(), retention: undefined, checkAlerts: async () => undefined, log: silentLogger });
    const report = await onDemand.process(50);
    expect(report.budgetExhausted).toBe(true);
    expect(report.claimed).toBeLessThan(1000);
  });

  it('a call while a pass runs joins it, and the pass looks once more before it ends', async () => {
    const { worker, onDemand, release } = heldFirstBatch();
    const a = onDemand.process(10_000);
    const b = onDemand.process(10_000); // arrives while the first batch runs
    expect(b).toBe(a);
    release();
    // 1 claimed, then 0 (the first look ends), then the joined call's look: 1, then 0.
    expect(await a).toMatchObject({ claimed: 2 });
    expect(worker.calls).toBe(4);
    expect(onDemand.process(10_000)).not.toBe(a); // the pass ended: a new call starts its own
  });

  it('join says whether a pass runs, and a join makes it look once more (an event stored meanwhile needs no pass of its own)', async () => {
    const { onDemand, release } = heldFirstBatch();
    expect(onDemand.join()).toBe(false); // nothing runs: the caller starts a pass
    const pass = onDemand.process(10_000);
    expect(onDemand.join()).toBe(true);
    release();
    expect(await pass).toMatchObject({ claimed: 2 }); // the joined event's look found it
    expect(onDemand.join()).toBe(false);
  });

  it('the drain starts due cron runs, claims events, checks alerts and runs retention once an hour', async () => {
    let alertChecks = 0;
    let retentionPasses = 0;
    const retention = { start() {}, stop: async () => undefined, runOnce: async () => void retentionPasses++ } as never;
    const onDemand = createOnDemandProcessing({
      worker: scriptedWorker([2]),
      cron: cron(1),
      retention,
      checkAlerts: async () => void alertChecks++,
      log: silentLogger,
    });
    expect(await onDemand.drain(10_000)).toMatchObject({ claimed: 2, cronRunsStarted: 1, budgetExhausted: false });
    await onDemand.drain(10_000);
    expect([alertChecks, retentionPasses]).toEqual([2, 1]);
  });
});
