import { requireString, type Verifier } from '../delivery.js';
import { defineProvider, type SecretSetting } from '../provider.js';
import { providerId, samplePerson, uuid } from '../sample-events/ids.js';
import { createStandardVerifier, signStandard } from './standard-webhooks.js';

/** Polar's secret is used as raw bytes; standardwebhooks takes them base64-encoded (as Polar's SDK passes them). */
const asStandardSecret = (secret: string) => (secret.startsWith('whsec_') ? secret : Buffer.from(secret, 'utf8').toString('base64'));

/**
 * Polar signs with Standard Webhooks (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`), verified by the standardwebhooks library. Key: the
 * message id; type: `type` (`subscription.active`).
 * https://docs.polar.sh/integrate/webhooks/delivery
 */
export function createPolarVerifier(setting: SecretSetting): Verifier {
  const hint = 'webhook-id/webhook-timestamp/webhook-signature headers';
  return createStandardVerifier(setting.values.map(asStandardSecret), setting.envName, hint, (value) => requireString(value, 'type', 'A Polar event'));
}

function buildPolarSample(type: string, nowMs: number): Record<string, unknown> {
  const person = samplePerson();
  const at = new Date(nowMs).toISOString();
  const customer = { id: uuid(), email: person.email, name: `${person.firstName} ${person.lastName}` };
  if (type === 'order.paid')
    return { type, timestamp: at, data: { id: uuid(), status: 'paid', total_amount: 2900, currency: 'usd', customer, created_at: at } };
  const status = type === 'subscription.canceled' ? 'canceled' : 'active';
  return {
    type,
    timestamp: at,
    data: {
      id: uuid(),
      status,
      amount: 2900,
      currency: 'usd',
      recurring_interval: 'month',
      customer,
      product: { id: uuid(), name: 'Pro' },
      current_period_end: at,
      created_at: at,
      modified_at: at,
    },
  };
}

/** Polar on `/webhooks/payments` with `PAYMENTS_PROVIDER=polar`, secret `POLAR_WEBHOOK_SECRET`. */
export const polarProvider = defineProvider({
  title: 'Polar',
  route: 'payments',
  name: 'polar',
  secretEnv: ['POLAR_WEBHOOK_SECRET'],
  body: 'json',
  credentialHeaders: ['webhook-signature'],
  missingCredentials: {
    code: 'missing_signature',
    message: 'Missing webhook-id/webhook-timestamp/webhook-signature headers: send the request exactly as Polar signs it.',
  },
  createVerifier: (setting) => createPolarVerifier(setting),
  sampleTypes: ['subscription.created', 'subscription.active', 'subscription.canceled', 'order.paid'],
  buildSample: buildPolarSample,
  envelope: (type, nowMs) => ({ type, timestamp: new Date(nowMs).toISOString(), data: { id: providerId('pol', 20) } }),
  sign: ({ body, secret, nowMs, messageId }) => signStandard('webhook', asStandardSecret(secret), body, nowMs, messageId),
  openapi: {
    summary: 'Polar events (PAYMENTS_PROVIDER=polar)',
    description: 'Standard Webhooks; secret POLAR_WEBHOOK_SECRET (or PAYMENTS_WEBHOOK_SECRET). Idempotency key: `webhook-id`; type: `type`.',
    headers: [
      { name: 'webhook-id', description: 'message id: the idempotency key', required: true },
      { name: 'webhook-timestamp', description: 'unix seconds', required: true },
      { name: 'webhook-signature', description: '`v1,<base64>` list', required: true },
    ],
  },
});
