import { randomBytes } from 'node:crypto';
import type { Source } from '../webhooks/providers/index.js';

type BuildSample = (source: Source, type: string, overrides?: unknown, nowMs?: number) => Record<string, unknown>;

/**
 * One customer's life as four linked sample events, for `hookrun send
 * --story`: a Clerk user signs up, pays at checkout (the session names the
 * user as `client_reference_id`), gets a subscription, and its first invoice
 * is paid. The mirrors then show one user, one customer linked to it and one
 * active subscription, instead of four unrelated rows.
 */
export function buildStory(buildSample: BuildSample, nowMs: number = Date.now()): Array<{ source: Source; event: Record<string, unknown> }> {
  const tag = randomBytes(6).toString('hex');
  const user = `user_story_${tag}`;
  const customer = `cus_story_${tag}`;
  const subscription = `sub_story_${tag}`;
  const at = (offsetSeconds: number) => nowMs + offsetSeconds * 1000;
  return [
    { source: 'auth', event: buildSample('auth', 'user.created', { data: { id: user } }, at(0)) },
    { source: 'payments', event: buildSample('payments', 'checkout.session.completed', { data: { object: { customer, client_reference_id: user } } }, at(1)) },
    {
      source: 'payments',
      event: buildSample('payments', 'customer.subscription.created', { data: { object: { id: subscription, customer, status: 'active' } } }, at(2)),
    },
    {
      source: 'payments',
      event: buildSample(
        'payments',
        'invoice.paid',
        { data: { object: { customer, subscription, parent: { subscription_details: { subscription } } } } },
        at(3),
      ),
    },
  ];
}
