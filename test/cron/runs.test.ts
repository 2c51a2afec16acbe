import { describe, expect, it } from 'vitest';
import { loadJobs } from '../../src/cron/registry.js';
import { countPages } from '../../src/db/pages.js';
import { AppError } from '../../src/errors.js';
import { SECRETS } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { allRuns, createHarness, deferred, faultyDatabase, jobsOf } from './support.js';
import { pollUntil } from '../helpers/poll.js';

describe.each(databaseKinds())('cron runs on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  it('a CLI run is one row with trigger cli, timestamps from the clock and a duration', async () => {
    const h = await createHarness(testDb.db, { jobs: await loadJobs() });
    const result = await h.cron.runJob('keep-alive', 'cli');
    expect(result).toMatchObject({ job: 'keep-alive', trigger: 'cli', status: 'succeeded', error: null });
    const [row] = await allRuns(testDb.db);
    expect(row).toMatchObject({ id: result.id, trigger: 'cli', status: 'succeeded', scheduledFor: null, expiresAt: null });
    expect(row!.startedAt.getTime()).toBe(h.clock.now());
    expect(row!.durationMs).toEqual(expect.any(Number));
    expect(await countPages(testDb.db)).toBe(0);
  });

  it('keep-alive leaves pages empty when it fails half-way (after its insert)', async () => {
    const faulty = faultyDatabase(testDb.db, { failOn: /^DELETE FROM hookrun.pages/ });
    const h = await createHarness(faulty, { jobs: await loadJobs() });
    const result = await h.cron.runJob('keep-alive', 'cli');
    expect(result.status).toBe('failed');
    expect(result.error).toContain('injected failure on: DELETE FROM hookrun.pages');
    expect(await countPages(testDb.db)).toBe(0);
    expect(await allRuns(testDb.db)).toMatchObject([{ status: 'failed', error: result.error }]);
  });

  it('a timeout aborts the job signal and records failed', async () => {
    let aborted: unknown;
    const h = await createHarness(testDb.db, {
      jobs: jobsOf({
        hang: {
          timeoutMs: 30,
          run: ({ signal }) =>
            new Promise((_, reject) =>
              signal.addEventListener('abort', () => {
                aborted = signal.reason;
                reject(signal.reason);
              }),
            ),
        },
      }),
    });
    const result = await h.cron.runJob('hang', 'cli');
    expect(result).toMatchObject({ status: 'failed', error: 'timed out after 30 ms' });
    expect(aborted).toBeInstanceOf(Error);
    expect(await allRuns(testDb.db)).toMatchObject([{ status: 'failed', error: 'timed out after 30 ms' }]);
    expect((await allRuns(testDb.db))[0]!.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('a job that ignores its signal is recorded failed at its timeout, and blocks this instance until it returns', async () => {
    const gate = deferred();
    const h = await createHarness(testDb.db, { jobs: jobsOf({ stubborn: { timeoutMs: 30, run: () => gate.promise } }) });
    expect((await h.cron.runJob('stubborn', 'cli')).status).toBe('failed');
    expect((await h.cron.runJob('stubborn', 'cli')).status).toBe('skipped');
    gate.resolve();
    await h.cron.idle(5000);
    expect((await h.cron.runJob('stubborn', 'cli')).status).toBe('succeeded');
    expect((await allRuns(testDb.db)).map((r) => r.status)).toEqual(['failed', 'skipped', 'succeeded']);
  });

  it('overlap across instances: a running row of another instance makes an HTTP call 409', async () => {
    const gate = deferred();
    const jobs = jobsOf({ slow: { run: () => gate.promise } });
    const a = await createHarness(testDb.db, { jobs });
    const b = await createHarness(testDb.db, { jobs });
    const first = a.cron.runJob('slow', 'cli');
    await pollUntil('a running run', 5000, async () => (await allRuns(testDb.db)).some((r) => r.status === 'running') || undefined, 5);
    const res = await b.app.request('/cron/slow', { method: 'POST', headers: { Authorization: `Bearer ${SECRETS.cron}` } });
    expect(res.status).toBe(409);
    gate.resolve();
    expect((await first).status).toBe('succeeded');
    expect((await allRuns(testDb.db)).map((r) => `${r.trigger}:${r.status}`)).toEqual(['cli:succeeded', 'http:skipped']);
  });

  it("overlap 'allow' lets runs overlap", async () => {
    const gate = deferred();
    const h = await createHarness(testDb.db, { jobs: jobsOf({ wide: { overlap: 'allow', run: () => gate.promise } }) });
    const first = h.cron.runJob('wide', 'cli');
    await pollUntil('a running run', 5000, async () => (await allRuns(testDb.db)).some((r) => r.status === 'running') || undefined, 5);
    const second = h.cron.runJob('wide', 'cli');
    await pollUntil('two running runs', 5000, async () => (await allRuns(testDb.db)).filter((r) => r.status === 'running').length === 2 || undefined, 5);
    gate.resolve();
    expect([(await first).status, (await second).status]).toEqual(['succeeded', 'succeeded']);
  });

  it("a crashed instance's running row stops blocking after its expires_at and is marked abandoned", async () => {
    const h = await createHarness(testDb.db, { jobs: jobsOf({ nightly: { timeoutMs: 60_000, run() {} } }) });
    const now = h.clock.now();
    await testDb.db.query(`INSERT INTO hookrun.cron_runs (job, trigger, started_at, status, expires_at) VALUES ('nightly', 'schedule', $1, 'running', $2)`, [
      new Date(now - 30_000),
      new Date(now + 30_000),
    ]);
    expect((await h.cron.runJob('nightly', 'cli')).status).toBe('skipped');
    h.clock.advance(30_000);
    expect((await h.cron.runJob('nightly', 'cli')).status).toBe('succeeded');
    const runs = await allRuns(testDb.db);
    expect(runs.map((r) => r.status)).toEqual(['failed', 'skipped', 'succeeded']);
    expect(runs[0]!.error).toMatch(/^abandoned/);
  });

  it('database down: runJob throws unavailable and the route answers 503 in the error contract', async () => {
    const faulty = faultyDatabase(testDb.db);
    const h = await createHarness(faulty, { jobs: await loadJobs() });
    faulty.down = true;
    await expect(h.cron.runJob('keep-alive', 'cli')).rejects.toMatchObject({ code: 'unavailable' });
    const res = await h.app.request('/cron/keep-alive', { method: 'POST', headers: { Authorization: `Bearer ${SECRETS.cron}` } });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unavailable');
  });

  it('unknown job through the service API is not_found', async () => {
    const h = await createHarness(testDb.db, { jobs: await loadJobs() });
    const error = await h.cron.runJob('nope', 'cli').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'not_found' });
  });

  it('listJobs shows the schedule, the next 3 runs in UTC and the last run', async () => {
    const h = await createHarness(testDb.db, {
      jobs: new Map([...(await loadJobs()), ...jobsOf({ manual: { description: 'only by hand', run() {} } })]),
      crons: [{ path: '/cron/keep-alive', schedule: '0 1 * * *' }],
    });
    h.clock.set(Date.UTC(2026, 2, 10, 12, 0, 0));
    await h.cron.runJob('keep-alive', 'cli');
    const jobs = (await h.cron.listJobs()).filter((j) => !j.name.startsWith('reconcile-')); // shipped, unscheduled
    expect(jobs.map((j) => j.name)).toEqual(['keep-alive', 'manual']);
    expect(jobs[0]).toMatchObject({ path: '/cron/keep-alive', schedule: '0 1 * * *', timeoutMs: 30_000, overlap: 'skip', catchUp: 'latest' });
    expect(jobs[0]!.nextRuns.map((d) => d.toISOString())).toEqual(['2026-03-11T01:00:00.000Z', '2026-03-12T01:00:00.000Z', '2026-03-13T01:00:00.000Z']);
    expect(jobs[0]!.lastRun).toMatchObject({ trigger: 'cli', status: 'succeeded' });
    expect(jobs[1]).toMatchObject({ schedule: null, nextRuns: [], lastRun: null, description: 'only by hand' });
    expect(h.cron.nextRuns('keep-alive', 1).map((d) => d.toISOString())).toEqual(['2026-03-11T01:00:00.000Z']);
    expect((await h.cron.listRuns({ job: 'keep-alive' })).length).toBe(1);
  });

  it('stop() waits for a running job, bounded, then aborts it', async () => {
    let sawAbort = false;
    const h = await createHarness(testDb.db, {
      env: { SHUTDOWN_TIMEOUT_MS: '100' },
      jobs: jobsOf({
        long: {
          run: ({ signal }) =>
            new Promise((_, reject) =>
              signal.addEventListener('abort', () => {
                sawAbort = true;
                reject(signal.reason);
              }),
            ),
        },
      }),
    });
    const run = h.cron.runJob('long', 'cli');
    await pollUntil('a running run', 5000, async () => (await allRuns(testDb.db)).some((r) => r.status === 'running') || undefined, 5);
    await h.cron.stop();
    expect(sawAbort).toBe(true);
    expect(await run).toMatchObject({ status: 'failed', error: 'aborted: hookrun is shutting down' });
  });
});
