import { reconcileSenderJob } from '../reconcile-sender-job.js';

/** `hookrun reconcile github` on a schedule: ask GitHub to redeliver what the inbox misses of the last 3 days (GITHUB_TOKEN, GITHUB_HOOK). */
export default reconcileSenderJob('github');
