import { randomUUID } from 'node:crypto';
import { AppError } from '../../errors.js';
import { bodyDigestOf, parseJsonObject, type Verifier } from '../delivery.js';
import { defineProvider } from '../provider.js';
import { samplePerson } from '../sample-events/ids.js';
import { hmac, matchesAnySecret } from './hmac.js';

/** The answer to a delivery without the signature header: from the verifier, and before the body is read. */
const MISSING_SIGNATURE = 'Missing X-Shopify-Hmac-Sha256 header: send the request exactly as Shopify signs it.';

const BASE64_SHA256 = /^[A-Za-z0-9+/]{43}=$/;
/** Shopify topics: `orders/create`, `app/uninstalled`, `customers/data_request`. */
const TOPIC = /^[a-z_]{1,64}\/[a-z_]{1,64}$/;

/**
 * Shopify: `X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256 of the body>`
 * under the app's client secret (or the store's webhook signing key); it
 * covers the body only. The key is `X-Shopify-Event-Id`, which every
 * delivery of one event shares (Shopify may send an event more than once),
 * and only it makes a duplicate: `orders/create` and `orders/paid` can carry
 * the same body. The body's SHA-256 marks a suspected replay: the same signed
 * body under a new, unsigned event id is stored, handled, and marked with the
 * earlier event. The type is `X-Shopify-Topic`, which the body does not
 * repeat, so it cannot be checked. No timestamp is signed
 * (`X-Shopify-Triggered-At` is not covered).
 * https://shopify.dev/docs/apps/build/webhooks/subscribe/https#step-5-verify-the-webhook
 */
export function createShopifyVerifier(secrets: readonly string[]): Verifier {
  return ({ body, headers }) => {
    const signature = headers.get('x-shopify-hmac-sha256');
    if (!signature) throw new AppError('missing_signature', MISSING_SIGNATURE);
    if (!BASE64_SHA256.test(signature)) throw new AppError('invalid_signature', 'X-Shopify-Hmac-Sha256 must be a base64 HMAC-SHA256 (44 characters).');
    if (!matchesAnySecret(signature, secrets, (secret) => hmac('sha256', secret, body, 'base64'))) {
      throw new AppError(
        'invalid_signature',
        "X-Shopify-Hmac-Sha256 does not match SHOPIFY_WEBHOOK_SECRET (the app's client secret). Check it and that the body is forwarded unchanged.",
      );
    }
    const eventId = headers.get('x-shopify-event-id');
    const topic = headers.get('x-shopify-topic');
    if (!eventId || eventId.length > 255) throw new AppError('invalid_payload', 'A Shopify delivery needs an X-Shopify-Event-Id header (1-255 characters).');
    if (!topic || !TOPIC.test(topic)) throw new AppError('invalid_payload', 'A Shopify delivery needs an X-Shopify-Topic header like "orders/create".');
    const { text } = parseJsonObject(body);
    return { key: eventId, type: topic, payloadJson: text, bodyDigest: bodyDigestOf(body) };
  };
}

function buildShopifySample(type: string, nowMs: number): Record<string, unknown> {
  const person = samplePerson();
  const at = new Date(nowMs).toISOString();
  const customer = {
    id: 706405506930370000 + (nowMs % 100_000),
    email: person.email,
    first_name: person.firstName,
    last_name: person.lastName,
    created_at: at,
    updated_at: at,
  };
  if (type === 'customers/create') return customer;
  if (type === 'app/uninstalled')
    return {
      id: 548380009,
      name: 'Hookrun Dev Store',
      email: person.email,
      domain: 'hookrun-dev.myshopify.com',
      myshopify_domain: 'hookrun-dev.myshopify.com',
    };
  return {
    id: 820982911946154500 + (nowMs % 100_000),
    name: '#1001',
    email: person.email,
    created_at: at,
    updated_at: at,
    currency: 'USD',
    total_price: '29.00',
    financial_status: 'paid',
    customer,
    line_items: [{ id: 866550311766439000, title: 'Hookrun T-shirt', quantity: 1, price: '29.00', sku: 'HR-TEE' }],
  };
}

/** Shopify on `/webhooks/shopify`, secret `SHOPIFY_WEBHOOK_SECRET`. */
export const shopifyProvider = defineProvider({
  title: 'Shopify',
  route: 'shopify',
  name: 'shopify',
  secretEnv: ['SHOPIFY_WEBHOOK_SECRET'],
  body: 'json',
  credentialHeaders: ['x-shopify-hmac-sha256'],
  missingCredentials: { code: 'missing_signature', message: MISSING_SIGNATURE },
  createVerifier: (setting) => createShopifyVerifier(setting.values),
  sampleTypes: ['orders/create', 'customers/create', 'app/uninstalled'],
  buildSample: buildShopifySample,
  envelope: () => ({}),
  sign: ({ body, secret, messageId, type, nowMs }) => ({
    'x-shopify-hmac-sha256': hmac('sha256', secret, body, 'base64'),
    'x-shopify-event-id': messageId.startsWith('msg_') ? randomUUID() : messageId,
    'x-shopify-webhook-id': randomUUID(),
    'x-shopify-topic': type || 'orders/create',
    'x-shopify-shop-domain': 'hookrun-dev.myshopify.com',
    'x-shopify-api-version': '2025-10',
    'x-shopify-triggered-at': new Date(nowMs).toISOString(),
  }),
  openapi: {
    summary: 'Shopify webhooks',
    description:
      "Secret SHOPIFY_WEBHOOK_SECRET (the app's client secret). Idempotency key: `X-Shopify-Event-Id` (shared by every delivery of one event). Type: `X-Shopify-Topic`. No timestamp is signed and the headers are not: only the event id makes a duplicate; the same body under a new id is stored and marked as a suspected replay of the earlier event (`sameBodyAs`, the metric hookrun_suspected_replays_total). The topic is not in the body, so it cannot be checked.",
    headers: [
      { name: 'X-Shopify-Hmac-Sha256', description: 'base64 HMAC-SHA256 of the body', required: true },
      { name: 'X-Shopify-Event-Id', description: 'the event id: the idempotency key', required: true },
      { name: 'X-Shopify-Topic', description: '`orders/create`, …', required: true },
    ],
  },
});
