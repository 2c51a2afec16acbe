import { createHash } from 'node:crypto';
import { AppError } from '../../errors.js';
import { parseJsonObject, type Verifier } from '../delivery.js';
import { defineProvider } from '../provider.js';
import { samplePerson } from '../sample-events/ids.js';
import { hmac, matchesAnySecret } from './hmac.js';

/** The answer to a delivery without the signature header: from the verifier, and before the body is read. */
const MISSING_SIGNATURE = 'Missing X-Signature header: send the request exactly as Lemon Squeezy signs it.';

const EVENT_NAME = /^[a-z_]{1,64}$/;

/**
 * Lemon Squeezy: `X-Signature: <hex HMAC-SHA256 of the body>` under the
 * webhook's signing secret. Type: `meta.event_name` (`subscription_updated`).
 * Lemon Squeezy sends no event id and signs no time, so the key is a hash of
 * the body: a retry (the same body) is a duplicate, and a replay is stopped by
 * its key. https://docs.lemonsqueezy.com/help/webhooks/signing-requests
 */
export function createLemonSqueezyVerifier(secrets: readonly string[]): Verifier {
  return ({ body, headers }) => {
    const signature = headers.get('x-signature');
    if (!signature) throw new AppError('missing_signature', MISSING_SIGNATURE);
    if (!/^[0-9a-f]{64}$/.test(signature)) throw new AppError('invalid_signature', 'X-Signature must be a hex HMAC-SHA256 (64 digits).');
    if (!matchesAnySecret(signature, secrets, (secret) => hmac('sha256', secret, body, 'hex'))) {
      throw new AppError('invalid_signature', 'X-Signature does not match LEMONSQUEEZY_WEBHOOK_SECRET. Check it and that the body is forwarded unchanged.');
    }
    const { text, value } = parseJsonObject(body);
    const eventName = (value.meta as { event_name?: unknown } | undefined)?.event_name;
    if (typeof eventName !== 'string' || !EVENT_NAME.test(eventName))
      throw new AppError('invalid_payload', 'A Lemon Squeezy event needs meta.event_name (like "subscription_created").');
    return { key: `sha256:${createHash('sha256').update(body).digest('hex')}`, type: eventName, payloadJson: text };
  };
}

function buildLemonSqueezySample(type: string, nowMs: number): Record<string, unknown> {
  const person = samplePerson();
  const at = new Date(nowMs).toISOString();
  const id = String(100_000 + (nowMs % 900_000));
  const attributes =
    type === 'order_created'
      ? { store_id: 1, customer_id: 1, user_email: person.email, status: 'paid', total: 2900, currency: 'USD', created_at: at, updated_at: at }
      : {
          store_id: 1,
          customer_id: 1,
          order_id: 1,
          user_email: person.email,
          status: type === 'subscription_cancelled' ? 'cancelled' : 'active',
          product_name: 'Pro',
          variant_name: 'Monthly',
          renews_at: at,
          created_at: at,
          updated_at: at,
        };
  return { meta: { event_name: type, custom_data: {} }, data: { type: type === 'order_created' ? 'orders' : 'subscriptions', id, attributes } };
}

/** Lemon Squeezy on `/webhooks/payments` with `PAYMENTS_PROVIDER=lemonsqueezy`, secret `LEMONSQUEEZY_WEBHOOK_SECRET`. */
export const lemonSqueezyProvider = defineProvider({
  title: 'Lemon Squeezy',
  route: 'payments',
  name: 'lemonsqueezy',
  secretEnv: ['LEMONSQUEEZY_WEBHOOK_SECRET'],
  body: 'json',
  credentialHeaders: ['x-signature'],
  missingCredentials: { code: 'missing_signature', message: MISSING_SIGNATURE },
  createVerifier: (setting) => createLemonSqueezyVerifier(setting.values),
  sampleTypes: ['subscription_created', 'subscription_updated', 'subscription_cancelled', 'order_created'],
  buildSample: buildLemonSqueezySample,
  envelope: (type) => ({ meta: { event_name: type }, data: {} }),
  sign: ({ body, secret, type }) => ({ 'x-signature': hmac('sha256', secret, body, 'hex'), 'x-event-name': type }),
  openapi: {
    summary: 'Lemon Squeezy events (PAYMENTS_PROVIDER=lemonsqueezy)',
    description:
      'Secret LEMONSQUEEZY_WEBHOOK_SECRET (or PAYMENTS_WEBHOOK_SECRET). Type: `meta.event_name`. No event id and no timestamp are sent: the key is a hash of the body, so a retry is a duplicate.',
    headers: [{ name: 'X-Signature', description: 'hex HMAC-SHA256 of the body', required: true }],
  },
});
