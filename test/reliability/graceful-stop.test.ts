import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectionRefused } from '../helpers/connection-refused.js';
import { afterAll, describe, expect, it } from 'vitest';
import { reportFigures } from '../helpers/figures.js';
import { inboxCounts, withDatabase } from '../helpers/inspect-db.js';
import { assertNoSecretLeaks } from '../helpers/secret-scan.js';
import { acknowledged, checkoutCompleted, clerkUserCreated, sendAll, type Delivery, type SendResult } from '../helpers/signed-deliveries.js';
import { pollUntil, seedDataDir, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';
import { waitForInboxSettled } from '../helpers/worker-probe.js';

const CONCURRENCY = 20;
const SIGTERM_AFTER_ACKS = 300;
/** How many acks before the signal the half-sent upload starts: enough for its headers to be read before the signal. */
const SLOW_UPLOAD_LEAD_ACKS = 30;
const EXIT_WITHIN_MS = 10_000;

/** Start a POST whose body arrives in two halves; resolves with the answer once `finish()` sends the rest. */
function startSlowUpload(baseUrl: string, delivery: Delivery): { finish: () => void; result: Promise<SendResult> } {
  const started = Date.now();
  const bytes = Buffer.from(delivery.body);
  const half = Math.floor(bytes.length / 2);
  let finish: () => void = () => undefined;
  const result = new Promise<SendResult>((resolve) => {
    const req = request(
      `${baseUrl}/webhooks/${delivery.source}`,
      { method: 'POST', headers: { ...delivery.sign(Date.now()), 'content-length': bytes.length } },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: Date.now() - started }));
      },
    );
    req.on('error', (error) => resolve({ error: (error as NodeJS.ErrnoException).code ?? error.message, ms: Date.now() - started }));
    req.flushHeaders();
    req.write(bytes.subarray(0, half));
    finish = () => req.end(bytes.subarray(half));
  });
  return { finish: () => finish(), result };
}

// Guarantee 6: SIGTERM under load — in-flight requests finish, new connections are refused, claims are settled or released, exit 0 within 10 s.
describe('graceful stop (SIGTERM under load, PGlite)', () => {
  const started: HookrunProcess[] = [];
  let dataDir: string;
  afterAll(async () => {
    for (const proc of started) await proc.stop(5_000);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    assertNoSecretLeaks();
  });

  it('finishes in-flight requests, refuses new connections and exits 0 within 10 s without losing anything', { timeout: 120_000 }, async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'hookrun-rel-stop-'));
    await seedDataDir(dataDir);
    const hookrun = await spawnHookrun({ dataDir });
    started.push(hookrun);
    const tag = `gs${Date.now().toString(36)}`;
    const deliveries: Delivery[] = Array.from({ length: 3_000 }, (_, i) => (i % 2 ? clerkUserCreated(`${tag}_${i}`) : checkoutCompleted(`${tag}_${i}`)));

    // The half-sent upload starts shortly before the signal: a body has 5 s to arrive (then 408), and on a busy
    // machine the first acks alone can take longer than that.
    let slow: ReturnType<typeof startSlowUpload> | undefined;
    let acks = 0;
    let sigtermAt = 0;
    let refusedWhileStopping: { refused: boolean; processAlive: boolean } | undefined;
    let refusals = 0;
    const load = sendAll(hookrun.url, deliveries, {
      concurrency: CONCURRENCY,
      until: () => refusals >= CONCURRENCY,
      onResult: (_, result) => {
        if ('error' in result && result.error === 'ECONNREFUSED') refusals++;
        if (acknowledged(result) && ++acks === SIGTERM_AFTER_ACKS - SLOW_UPLOAD_LEAD_ACKS)
          slow = startSlowUpload(hookrun.url, clerkUserCreated(`${tag}_inflight`));
        if (acknowledged(result) && acks === SIGTERM_AFTER_ACKS) {
          sigtermAt = Date.now();
          hookrun.kill('SIGTERM');
          // The upload that was half-way through when the signal came finishes now.
          setTimeout(() => slow?.finish(), 200);
          // Once it says it is stopping, and while it still runs, a new connection is refused.
          void pollUntil('"stopping" in the log', 10_000, async () => (hookrun.output().includes('"msg":"stopping') ? true : undefined))
            .then(async () => {
              const processAlive = hookrun.exited === undefined;
              refusedWhileStopping = { refused: await connectionRefused(hookrun.url), processAlive };
            })
            .catch(() => undefined);
        }
      },
    });
    const exit = await hookrun.waitForExit(EXIT_WITHIN_MS + 5_000).catch((error: Error) => {
      throw new Error(`${error.message}\n--- hookrun output ---\n${hookrun.output().slice(-3000)}`);
    });
    const exitMs = Date.now() - sigtermAt;
    const times = Object.fromEntries(
      hookrun
        .output()
        .split('\n')
        .flatMap((line) => {
          const m = /"time":(\d+).*"msg":"(shutdown requested|stopped)"/.exec(line);
          return m ? [[m[2]!, Number(m[1])]] : [];
        }),
    );
    const stopMsInProcess = times.stopped! - times['shutdown requested']!;
    const results = await load;
    const inflight = await slow!.result;

    expect(exit, hookrun.output().slice(-3000)).toEqual({ code: 0, signal: null });
    // Measured by the process's own log (the test process is busy sending, so its clock of the exit lags).
    expect(stopMsInProcess).toBeLessThan(EXIT_WITHIN_MS);
    expect(exitMs).toBeLessThan(EXIT_WITHIN_MS + 5_000);
    expect(inflight).toMatchObject({ status: 200 });
    expect(await pollUntil('the refusal probe', 5_000, async () => refusedWhileStopping)).toMatchObject({ refused: true });
    const answered = results.filter((r) => 'status' in r);
    // Every answer is a 2xx: nothing half-done (no 5xx while the database closes).
    expect(answered.filter((r) => !acknowledged(r))).toEqual([]);
    const transportErrors: Record<string, number> = {};
    for (const r of results) if ('error' in r) transportErrors[r.error] = (transportErrors[r.error] ?? 0) + 1;

    const afterStop = await withDatabase({ dataDir }, async (query) => ({
      counts: await inboxCounts(query),
      keys: new Set((await query<{ key: string }>('SELECT key FROM hookrun.webhook_events')).map((r) => r.key)),
    }));
    const ackedKeys = deliveries.filter((_, i) => acknowledged(results[i]!)).map((d) => d.key);
    expect(ackedKeys.filter((k) => !afterStop.keys.has(k))).toEqual([]);
    expect(afterStop.keys.has(`msg_${tag}_inflight`)).toBe(true);
    // The worker finished its batch or released its claims: no delivery is left running.
    expect(afterStop.counts.running).toBe(0);

    // The provider re-sends the rest to the restarted service.
    const next = await spawnHookrun({ dataDir });
    started.push(next);
    const missing = deliveries.filter((_, i) => !acknowledged(results[i]!));
    const resent = await sendAll(next.url, missing, { concurrency: CONCURRENCY });
    expect(resent.filter((r) => !acknowledged(r))).toEqual([]);
    await waitForInboxSettled(next.url, { dataDir }, deliveries.length + 1, 60_000);
    expect(await next.stop(EXIT_WITHIN_MS)).toEqual({ code: 0, signal: null });
    const final = await withDatabase({ dataDir }, inboxCounts);
    expect(final.rows).toBe(deliveries.length + 1);
    expect(final.distinctKeys).toBe(final.rows);
    expect(final.byStatus).toEqual({ processed: final.rows });

    reportFigures('6 graceful stop', {
      acknowledgedBeforeExit: ackedKeys.length,
      exitCode: exit.code,
      stopMsInProcess,
      exitSeenByTestMs: exitMs,
      acceptedAfterSigterm: results.filter(acknowledged).length - SIGTERM_AFTER_ACKS,
      inflightUploadStatus: (inflight as { status: number }).status,
      newConnectionRefusedWhileStopping: refusedWhileStopping,
      transportErrors,
      statusAfterStop: afterStop.counts.byStatus,
      resent: missing.length,
      finalRows: final.rows,
      lost: 0,
      finalByStatus: final.byStatus,
    });
  });
});
