import { defineHandler } from 'hookrun';

/**
 * Beside the shipped Stripe mirror (which keeps hookrun's `subscriptions`
 * table), a second handler on the same events: each runs once per event and
 * is retried on its own. `event` is stripe-node's type for each name in `on`.
 */
export default defineHandler({
  on: ['stripe:customer.subscription.updated', 'stripe:customer.subscription.deleted'],
  async run(event, ctx) {
    const subscription = event.data.object;
    ctx.log.info({ subscription: subscription.id, status: subscription.status, type: event.type }, 'subscription changed');
  },
});
