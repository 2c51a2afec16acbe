import { AppError, ConfigError } from '../../errors.js';
import { parseJsonObject, requireString, type Verifier } from '../delivery.js';
import { defineProvider, type SecretSetting } from '../provider.js';
import { providerId } from '../sample-events/ids.js';
import { buildStripeSample } from '../sample-events/stripe.js';
import { STRIPE_SAMPLE_TYPES } from '../sample-events/types.js';
import { stripeWebhooks } from './stripe-webhooks.js';

export { STRIPE_VERIFIER_LOAD_PATH } from './stripe-webhooks.js';

const STALE_MESSAGE = 'Timestamp outside the tolerance zone';

/**
 * The timestamp stripe-node verifies against, read exactly as its
 * `parseHeader` does: the LAST `t=` element wins, the name must be `t` to the
 * letter, the value goes through parseInt. Reading it any other way (say, the
 * first `t`) would check the future side of the tolerance against a
 * timestamp the signature does not cover.
 */
export function headerTimestamp(header: string): number | undefined {
  let timestamp: number | undefined;
  for (const item of header.split(',')) {
    const [name, value] = item.split('=');
    if (name === 't') timestamp = Number.parseInt(value ?? '', 10);
  }
  return timestamp !== undefined && Number.isFinite(timestamp) ? timestamp : undefined;
}

/**
 * Stripe's scheme (`Stripe-Signature: t=…,v1=…`, HMAC-SHA256 of `t.rawBody`),
 * checked by stripe-node itself against each secret of a rotation list. Any
 * `v1` may match; `v0` is ignored. stripe-node checks only the past side of
 * the tolerance, so the future side is checked here.
 * https://docs.stripe.com/webhooks#verify-manually
 */
export function createStripeVerifier(secrets: string[]): Verifier {
  return ({ body, headers, nowMs, toleranceSeconds }) => {
    const header = headers.get('stripe-signature');
    if (!header) {
      throw new AppError('missing_signature', 'Missing Stripe-Signature header: send the request exactly as Stripe signs it.');
    }
    const timestamp = headerTimestamp(header);
    if (timestamp === undefined || !/(^|,)\s*v1=/.test(header)) {
      throw new AppError('invalid_signature', 'Stripe-Signature must look like "t=<unix seconds>,v1=<hex signature>".');
    }
    let stale = false;
    let matched = false;
    for (const secret of secrets) {
      try {
        stripeWebhooks.signature.verifyHeader(Buffer.from(body.buffer, body.byteOffset, body.byteLength), header, secret, toleranceSeconds, undefined, nowMs);
        matched = true;
        break;
      } catch (error) {
        if ((error as Error).message?.startsWith(STALE_MESSAGE)) stale = true;
      }
    }
    if (stale && !matched) {
      throw new AppError(
        'timestamp_out_of_tolerance',
        `Stripe-Signature timestamp is more than ${toleranceSeconds} s old; check the clock, or resend the event from the Stripe dashboard.`,
      );
    }
    if (!matched) {
      throw new AppError(
        'invalid_signature',
        'No Stripe-Signature v1 signature matches the configured secret. Check PAYMENTS_WEBHOOK_SECRET and that the body is forwarded unchanged.',
      );
    }
    if (timestamp - Math.floor(nowMs / 1000) > toleranceSeconds) {
      throw new AppError(
        'timestamp_out_of_tolerance',
        `Stripe-Signature timestamp is more than ${toleranceSeconds} s in the future; check the sender's clock.`,
      );
    }
    const { text, value } = parseJsonObject(body);
    return { key: requireString(value, 'id', 'A Stripe event'), type: requireString(value, 'type', 'A Stripe event'), payloadJson: text };
  };
}

/** The start of a Stripe API key (secret, restricted or publishable): pasted where the signing secret goes, no signature would ever match. */
const API_KEY = /^(sk|rk|pk)_(live|test)_/;

/** The setting's secrets, or a ConfigError at start-up when one is an API key: names the kind, never the key. */
function refuseApiKeys(setting: SecretSetting): string[] {
  for (const [index, secret] of setting.values.entries()) {
    const kind = API_KEY.exec(secret.trim())?.[0];
    if (kind === undefined) continue;
    const which = setting.values.length > 1 ? `value ${index + 1} of ${setting.envName}` : setting.envName;
    throw new ConfigError(
      `${which} is a Stripe API key (${kind}…), not a webhook signing secret: a signing secret starts with whsec_ (Stripe dashboard → Developers → Webhooks → the endpoint → Signing secret, or what \`stripe listen\` prints). An API key for reconcile goes in STRIPE_SECRET_KEY.`,
    );
  }
  return setting.values;
}

/** Stripe on `/webhooks/payments`: key the event `id`, type its `type`. */
export const stripeProvider = defineProvider({
  title: 'Stripe',
  route: 'payments',
  name: 'stripe',
  secretEnv: ['STRIPE_WEBHOOK_SECRET'],
  body: 'json',
  credentialHeaders: ['stripe-signature'],
  missingCredentials: { code: 'missing_signature', message: 'Missing Stripe-Signature header: send the request exactly as the provider signs it.' },
  createVerifier: (setting) => createStripeVerifier(refuseApiKeys(setting)),
  sampleTypes: STRIPE_SAMPLE_TYPES,
  buildSample: buildStripeSample,
  envelope: (type, nowMs) => ({
    id: providerId('evt', 24),
    object: 'event',
    api_version: stripeWebhooks.apiVersion,
    created: Math.floor(nowMs / 1000),
    data: { object: {} },
    livemode: false,
    type,
  }),
  sign: ({ body, secret, nowMs }) => ({
    'stripe-signature': stripeWebhooks.generateTestHeaderString({ payload: body, secret, timestamp: Math.floor(nowMs / 1000) }),
  }),
  openapi: {
    summary: 'Stripe events',
    description: 'Stripe signature scheme; secret PAYMENTS_WEBHOOK_SECRET (or STRIPE_WEBHOOK_SECRET). Idempotency key: the event `id`.',
    headers: [{ name: 'Stripe-Signature', description: '`t=<unix seconds>,v1=<hex HMAC-SHA256 of t.body>`', required: true }],
  },
});
