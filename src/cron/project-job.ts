import type { JobContext, JobDatabase, JobDefinition, JobTransaction } from '../api/define-job.js';
import { readEnvNames } from '../api/env-names.js';
import type { Database, Queryable } from '../db/database.js';
import { ConfigError, messageOf } from '../errors.js';
import { readNamedSettings } from '../config/named-settings.js';
import { resolveJob, type EngineJobContext, type ResolvedJob } from './job.js';

/** SQL only, on a connection or a transaction: nothing else of the engine's object is reachable from it. */
function queriesOn(q: Queryable): JobTransaction {
  return Object.freeze({
    query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]> {
      return q.query<T>(text, params);
    },
  });
}

/** A project job's `ctx.db`: its statements, and transactions of statements (no migrate, listen or close). */
function jobDatabase(db: Database): JobDatabase {
  return Object.freeze({
    ...queriesOn(db),
    transaction: <R>(fn: (tx: JobTransaction) => Promise<R>) => db.transaction((tx) => fn(queriesOn(tx))),
  });
}

/** The public context a project's job gets, built from the engine's for each run; its settings read from the environment hookrun started with. */
function publicContext(ctx: EngineJobContext, definition: JobDefinition, names: readonly string[], where: string): JobContext<string> {
  return {
    db: jobDatabase(ctx.db),
    env: readNamedSettings(where, names, ctx.config.environment),
    signal: ctx.signal,
    log: ctx.log,
    now: ctx.now,
    trigger: ctx.trigger,
    scheduledFor: ctx.scheduledFor,
    runId: ctx.runId,
  };
}

/**
 * A project's job file, adapted to the engine's runner: its default export
 * is what `defineJob(…)` returned (from any copy of hookrun; a plain
 * `{ run }` object too), its policies and `env` names are checked here and,
 * given the environment, each setting it names must be set. Every problem is
 * a ConfigError naming the file (`where`).
 */
export function projectJob(exported: unknown, where: string, env?: Readonly<Record<string, string | undefined>>): ResolvedJob {
  if (typeof exported !== 'object' || exported === null || typeof (exported as JobDefinition).run !== 'function') {
    throw new ConfigError(`${where}: must \`export default defineJob({ run(ctx) { … } })\` (import { defineJob } from 'hookrun').`);
  }
  const definition = exported as JobDefinition;
  let job: ResolvedJob;
  let names: readonly string[];
  try {
    names = readEnvNames(definition.env, 'defineJob');
    job = resolveJob({ ...definition, run: (ctx) => definition.run(publicContext(ctx, definition, names, where)) });
  } catch (error) {
    throw new ConfigError(`${where}: ${messageOf(error)}`);
  }
  if (env) readNamedSettings(where, names, env);
  return job;
}
