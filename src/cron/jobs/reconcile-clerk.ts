import { reconcileSenderJob } from '../reconcile-sender-job.js';

/** `hookrun reconcile clerk` on a schedule: bring the Clerk mirror up to date from the users and organizations lists (CLERK_SECRET_KEY). */
export default reconcileSenderJob('clerk');
