import type { Context, Hono } from 'hono';
import { AppError, ConfigError } from '../errors.js';
import type { Logger } from '../log.js';
import { SenderApiError } from '../reconcile/sender-api.js';
import { isReconcileSender, parseSenderSince, RECONCILE_SENDERS, type ReconcileSender } from '../reconcile/senders.js';
import type { ReconcileSummary } from '../reconcile/summary.js';
import { firstIssue, reconcileBody } from './admin-schemas.js';

/** What `POST /api/reconcile/{sender}` runs: the service's settings, database and writer, bound in operator-routes.ts. */
export type ReconcileSenderRun = (sender: ReconcileSender, since: Date) => Promise<ReconcileSummary>;

/**
 * `POST /api/reconcile/{sender}` `{since}`: gap repair run by the server, for
 * `hookrun reconcile <sender>` while this server holds the embedded database
 * (the CLI cannot open it then). A missing key is 503 `not_configured` naming
 * it; the sender API's refusal (401, 429, 500) is 503 `unavailable` with the provider's message.
 */
export function addSenderReconcileRoute(
  app: Hono,
  deps: { reconcileSender?: ReconcileSenderRun; now: () => number; log: Logger; readBody: (c: Context) => Promise<unknown> },
): void {
  app.post('/reconcile/:sender', async (c) => {
    const sender = c.req.param('sender');
    if (!isReconcileSender(sender)) {
      throw new AppError(
        'not_found',
        `No reconcile for "${sender.slice(0, 40)}": senders ${RECONCILE_SENDERS.join(', ')} (Stripe: POST /api/payments/reconcile).`,
      );
    }
    if (!deps.reconcileSender) throw new AppError('not_found', 'This hookrun does not run gap repair.');
    const parsed = reconcileBody.safeParse(await deps.readBody(c));
    if (!parsed.success) throw new AppError('bad_request', firstIssue(parsed.error));
    let since: Date;
    try {
      since = parseSenderSince(sender, parsed.data.since, deps.now());
    } catch (error) {
      throw new AppError('bad_request', (error as Error).message);
    }
    try {
      const summary = await deps.reconcileSender(sender, since);
      deps.log.info({ sender, since: summary.since, found: summary.found, added: summary.added }, 'sender reconciled by the admin API');
      return c.json(summary);
    } catch (error) {
      if (error instanceof ConfigError) throw new AppError('not_configured', `${error.message} Set it and restart hookrun.`);
      if (error instanceof SenderApiError) throw new AppError('unavailable', error.message);
      throw error;
    }
  });
}
