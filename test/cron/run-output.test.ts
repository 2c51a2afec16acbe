import { describe, expect, it } from 'vitest';
import { MAX_OUTPUT_LINES, captureRunLog } from '../../src/cron/run-output.js';
import { silentLogger } from '../../src/log.js';
import { SECRETS } from '../helpers/config.js';
import { pgliteOnly, useTestDatabase } from '../helpers/db.js';
import { allRuns, createHarness, jobsOf } from './support.js';

describe('captureRunLog', () => {
  it('keeps the last 50 lines, children included, and no more than 8 KB', () => {
    const { log, output } = captureRunLog(silentLogger);
    expect(output()).toBeNull();
    for (let i = 1; i <= 70; i++) (i % 2 ? log : log.child({ step: i })).info({ n: i }, `line ${i}`);
    const lines = output()!.split('\n');
    expect(lines).toHaveLength(MAX_OUTPUT_LINES);
    expect(lines[0]).toBe('info line 21 {"n":21}');
    expect(lines.at(-1)).toBe('info line 70 {"n":70}');
    log.warn('x'.repeat(20_000));
    expect(output()!.length).toBeLessThanOrEqual(8 * 1024);
  });
});

describe.each(pgliteOnly())('a run keeps what its job logged ($name)', (kind) => {
  const testDb = useTestDatabase(kind);

  it('stored in cron_runs.output, answered by the run and the runs list, escaped on the dashboard', async () => {
    const jobs = jobsOf({
      chatty: {
        run: ({ log }) => {
          log.info({ shop: 'acme' }, 'synced 3 orders');
          log.child({ step: 2 }).warn('<script>alert(1)</script> skipped one');
          throw new Error('then failed');
        },
      },
    });
    const { cron, app } = await createHarness(testDb.db, { jobs });
    const run = await cron.runJob('chatty', 'cli');
    expect(run.status).toBe('failed');
    expect(run.output).toBe('info synced 3 orders {"shop":"acme"}\nwarn <script>alert(1)</script> skipped one');
    expect((await allRuns(testDb.db))[0]!.output).toBe(run.output);

    const auth = { authorization: `Bearer ${SECRETS.admin}` };
    const listed = (await (await app.request('/api/cron/runs?job=chatty', { headers: auth })).json()) as { runs: Array<{ output: string | null }> };
    expect(listed.runs[0]!.output).toBe(run.output);

    const login = await app.request('/admin/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost' },
      body: `token=${SECRETS.admin}`,
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const page = await (await app.request('/admin/jobs/chatty', { headers: { cookie } })).text();
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt; skipped one');
    expect(page).not.toContain('<script>alert(1)</script>');
  });
});
