import { reconcileSenderJob } from '../reconcile-sender-job.js';

/** `hookrun reconcile paddle` on a schedule: store the Paddle events the inbox is missing (PADDLE_API_KEY and PAYMENTS_PROVIDER=paddle). */
export default reconcileSenderJob('paddle');
