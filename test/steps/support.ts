import { expect } from 'vitest';
import type { Database } from '../../src/db/database.js';
import type { ManualClock } from '../../src/clock.js';
import { loadHandlers } from '../../src/project/load-project.js';
import { testConfig } from '../helpers/config.js';
import { HOOKRUN } from '../helpers/project-dir.js';
import { drain, testWorker } from '../inbox/fixtures.js';

/** A handler file on `on` whose `run` body is `body` (TypeScript source; `event` and `ctx` in scope), with `options` besides. */
export const handlerFile = (on: string, body: string, options = '') =>
  `import { defineHandler } from ${HOOKRUN};\nexport default defineHandler({ on: ['${on}'], ${options} async run(event, ctx) {\n${body}\n} });\n`;

/** Inside a step: count one run of `name` in the test's table (committed as it runs, like any side effect). */
export const ran = (name: string) => `await ctx.db.query('INSERT INTO step_runs (step) VALUES ($1)', [${name}]);`;

/** Runs counted by `ran`, by name. */
export async function runs(db: Database): Promise<Record<string, number>> {
  const rows = await db.query<{ step: string; n: number | string }>('SELECT step, count(*) AS n FROM step_runs GROUP BY step');
  return Object.fromEntries(rows.map((r) => [r.step, Number(r.n)]));
}

/** An empty run counter table. */
export async function resetRuns(db: Database): Promise<void> {
  await db.query('CREATE TABLE IF NOT EXISTS step_runs (step text)');
  await db.query('TRUNCATE step_runs');
}

/**
 * A service over `db` with the project in `dir`: a fresh registry and worker,
 * as after a restart (nothing in memory carries over); `clock` is shared.
 */
export async function startService(db: Database, dir: string, clock?: ManualClock) {
  const env = { HOOKRUN_PROJECT: dir };
  const { registry } = await loadHandlers(testConfig(env), {}, env);
  const { worker, clock: used } = testWorker(db, { handlers: registry, clock, options: { flowHorizonMs: 0 } });
  return { worker, clock: used, drain: () => drain(worker) };
}

/** The project handler's delivery of `eventId` (not the shipped mirror's): status, attempts, error, due time. */
export async function delivery(db: Database, eventId: number) {
  const [row] = await db.query<{ id: number; status: string; attempts: number; last_error: string | null; run_after: Date | string }>(
    "SELECT id, status, attempts, last_error, run_after FROM hookrun.handler_deliveries WHERE event_id = $1 AND handler NOT LIKE '%-mirror'",
    [eventId],
  );
  expect(row).toBeDefined();
  return { ...row!, attempts: Number(row!.attempts), runAfter: new Date(row!.run_after).getTime() };
}

/** A delivery's steps in order: id, status, attempts. */
export async function steps(db: Database, eventId: number) {
  return db.query<{ step_id: string; status: string; attempts: number }>(
    `SELECT s.step_id, s.status, s.attempts FROM hookrun.delivery_steps s JOIN hookrun.handler_deliveries d ON d.id = s.delivery_id
     WHERE d.event_id = $1 ORDER BY s.seq`,
    [eventId],
  );
}
