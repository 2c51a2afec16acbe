import type { Logger } from 'pino';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { defineJob, type JobContext, type JobDatabase, type JobDefinition } from '../../src/index.js';

/*
 * A project job's context is the public API, not the engine's: `npm run
 * typecheck` fails when a `@ts-expect-error` below stops being an error
 * (an engine field reached JobContext) or an `expectTypeOf` stops holding.
 */

describe('defineJob', () => {
  it("types ctx.env from the job's env list, and gives SQL only", () => {
    const job = defineJob({
      env: ['SLACK_TOKEN'],
      async run(ctx) {
        expectTypeOf(ctx.env.SLACK_TOKEN).toEqualTypeOf<string>();
        // @ts-expect-error: a setting the job did not name is not there
        void ctx.env.STRIPE_SECRET_KEY;
        // @ts-expect-error: hookrun's settings (every secret) are not a job's
        void ctx.config;
        // @ts-expect-error: nor the service's Stripe client
        void ctx.stripe;
        // @ts-expect-error: the engine's clock
        void ctx.clock;
        // @ts-expect-error: the engine's database object (migrate, close, listen) is not a job's
        void ctx.db.migrate;
        // @ts-expect-error: close
        void ctx.db.close;
        // @ts-expect-error: listen
        void ctx.db.listen;
        await ctx.db.transaction(async (tx) => {
          expectTypeOf(tx).toHaveProperty('query');
          // @ts-expect-error: a transaction's callback gets statements only, not another transaction
          void tx.transaction;
        });
      },
    });
    expectTypeOf(job).toEqualTypeOf<JobDefinition<'SLACK_TOKEN'>>();
    expect(job.env).toEqual(['SLACK_TOKEN']);
  });

  it('has the context the docs list', () => {
    expectTypeOf<keyof JobContext>().toEqualTypeOf<'db' | 'env' | 'signal' | 'log' | 'now' | 'trigger' | 'scheduledFor' | 'runId'>();
    expectTypeOf<keyof JobDatabase>().toEqualTypeOf<'query' | 'transaction'>();
    expectTypeOf<JobContext['log']>().toEqualTypeOf<Logger>();
    expectTypeOf<JobContext['env']>().toEqualTypeOf<Readonly<Record<never, string>>>();
  });

  it('checks the shape where it is written; the policies when the project loads', () => {
    expect(() => defineJob({} as never)).toThrow('defineJob: pass { run: async (context) => { … } }');
    expect(() => defineJob({ env: ['slack_token'], run() {} })).toThrow('defineJob: "env" must list environment variable names (UPPER_SNAKE_CASE)');
    expect(defineJob({ run() {} })).toMatchObject({ env: [] });
    expect(Object.isFrozen(defineJob({ run() {} }))).toBe(true);
  });
});
