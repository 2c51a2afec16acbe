import { describe, expect, it } from 'vitest';
import { loadAllJobs } from '../../src/cron/registry.js';
import { ConfigError } from '../../src/errors.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { HOOKRUN, useProjectDirs } from '../helpers/project-dir.js';
import { allRuns, createHarness } from '../cron/support.js';

const project = useProjectDirs();

/** A project job file: `defineJob({ <extra> async run(ctx) { <body> } })`. */
const job = (body: string, extra = '') => `import { defineJob } from ${HOOKRUN};\nexport default defineJob({ ${extra} async run(ctx) { ${body} } });\n`;

async function loadFailure(files: Record<string, string>, env: Record<string, string> = {}): Promise<string> {
  const error = await loadAllJobs(project(files), env).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as Error).message;
}

describe("a project's jobs/ folder", () => {
  it('refuses a job whose named setting is unset, or whose file is not a job or has a bad policy, naming the file', async () => {
    expect(await loadFailure({ 'jobs/notify.ts': job('', "env: ['SLACK_TOKEN', 'SLACK_CHANNEL'],") }, { SLACK_CHANNEL: '#ops' })).toMatch(
      /jobs\/notify\.ts: needs SLACK_TOKEN; set it in the environment or \.env\./,
    );
    expect(await loadFailure({ 'jobs/not-one.ts': 'export const run = () => {};\n' })).toMatch(/jobs\/not-one\.ts: must `export default defineJob\(/);
    expect(await loadFailure({ 'jobs/typo.ts': job('', "overlap: 'queue' as never,") })).toMatch(
      /jobs\/typo\.ts: defineJob: overlap must be "skip", "allow" or "queue-one"/,
    );
  });

  it('keeps every policy the file wrote, catchUpWindow included', async () => {
    const dir = project({ 'jobs/digest.ts': job('', "catchUp: 'all', catchUpWindow: '12h', catchUpMax: 5, retries: { attempts: 3 },") });
    const digest = (await loadAllJobs(dir, {})).get('digest')!;
    expect(digest).toMatchObject({ catchUp: 'all', catchUpWindowMs: 12 * 3_600_000, catchUpMax: 5, retries: { attempts: 3, backoff: 'exponential' } });
  });

  it('start-up (the cron service) refuses a job whose setting is unset', async () => {
    const dir = project({ 'jobs/notify.ts': job('', "env: ['SLACK_TOKEN'],") });
    const db = { query: () => Promise.reject(new Error('not used')) } as never;
    await expect(createHarness(db, { env: { HOOKRUN_PROJECT: dir } })).rejects.toThrow(/jobs\/notify\.ts: needs SLACK_TOKEN/);
  });
});

describe.each(databaseKinds())('project jobs run by the runner on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  it('gets the settings it named in ctx.env, SQL in ctx.db, and nothing of the engine', async () => {
    await testDb.db.query('CREATE TABLE IF NOT EXISTS project_job_seen (detail text)');
    await testDb.db.query('TRUNCATE project_job_seen');
    const dir = project({
      'jobs/notify.ts': job(
        `await ctx.db.query('INSERT INTO project_job_seen VALUES ($1)', [ctx.env.SLACK_TOKEN + ' ' + ctx.trigger + ' ' + ctx.runId]);
         const seen = ctx as unknown as Record<string, unknown>;
         await ctx.db.query('INSERT INTO project_job_seen VALUES ($1)', [Object.keys(seen).sort().join(',') + ' | ' + Object.keys(ctx.db).sort().join(',') + ' | ' + Object.keys(ctx.env).join(',')]);`,
        "env: ['SLACK_TOKEN'],",
      ),
    });
    const h = await createHarness(testDb.db, { env: { HOOKRUN_PROJECT: dir, SLACK_TOKEN: 'xoxb-1', OTHER_SECRET: 'not for jobs' } });
    const result = await h.cron.runJob('notify', 'cli');
    expect(result).toMatchObject({ status: 'succeeded', error: null });
    const rows = await testDb.db.query<{ detail: string }>('SELECT detail FROM project_job_seen');
    expect(rows.map((r) => r.detail)).toEqual([
      `xoxb-1 cli ${result.id}`,
      'db,env,log,now,runId,scheduledFor,signal,trigger | query,transaction | SLACK_TOKEN',
    ]);
  });

  it('groups statements with ctx.db.transaction: a throw rolls them all back', async () => {
    await testDb.db.query('CREATE TABLE IF NOT EXISTS project_job_ledger (entry text)');
    await testDb.db.query('TRUNCATE project_job_ledger');
    const dir = project({
      'jobs/ledger.ts': job(`
        const written = await ctx.db.transaction(async (tx) => {
          await tx.query("INSERT INTO project_job_ledger VALUES ('kept')");
          const [row] = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM project_job_ledger');
          return row!.n;
        });
        ctx.log.info({ written }, 'first transaction committed');
        await ctx.db.transaction(async (tx) => {
          await tx.query("INSERT INTO project_job_ledger VALUES ('rolled back')");
          throw new Error('half-way: ' + Object.keys(tx).join(','));
        });`),
    });
    const h = await createHarness(testDb.db, { env: { HOOKRUN_PROJECT: dir } });
    const result = await h.cron.runJob('ledger', 'cli');
    expect(result).toMatchObject({ status: 'failed', error: 'half-way: query' });
    expect(await testDb.db.query('SELECT entry FROM project_job_ledger')).toEqual([{ entry: 'kept' }]);
    expect((await allRuns(testDb.db)).map((r) => r.status)).toEqual(['failed']);
  });
});
