/**
 * hookrun's public API: what a project that installs hookrun imports. A plain
 * list of re-exports; everything else under dist/ is internal and may change.
 */

/** Declare a scheduled job: `export default defineJob({ run: async (ctx) => … })`. */
export { defineJob } from './cron/job.js';
/** What a job file writes (`run` and its policies), what a run receives, and the policies' shapes. */
export type { JobSpec, JobContext, JobDefinition, OverlapPolicy, CatchUpPolicy, RetryPolicy } from './cron/job.js';
