import { reconcileSenderJob } from '../reconcile-sender-job.js';

/** `hookrun reconcile workos` on a schedule: store the WorkOS events the inbox is missing (WORKOS_API_KEY and AUTH_PROVIDER=workos). */
export default reconcileSenderJob('workos');
