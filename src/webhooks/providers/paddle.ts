import { AppError } from '../../errors.js';
import { parseJsonObject, requireString, type Verifier } from '../delivery.js';
import { defineProvider } from '../provider.js';
import { providerId, samplePerson } from '../sample-events/ids.js';
import { hmac, matchesAnySecret } from './hmac.js';

/** The answer to a delivery without the signature header: from the verifier, and before the body is read. */
const MISSING_SIGNATURE = 'Missing Paddle-Signature header: send the request exactly as Paddle signs it.';

/** Paddle's own SDK accepts a signature at most this old (and no newer): a tighter window than the 300 s default. */
export const PADDLE_TOLERANCE_SECONDS = 5;

/**
 * Paddle Billing: `Paddle-Signature: ts=<unix>;h1=<hex>`, the HMAC-SHA256
 * of `ts:body` (a colon) under the notification destination's secret key;
 * during a secret rotation Paddle sends several `h1`, any may match. Key:
 * `event_id`; type: `event_type`. https://developer.paddle.com/webhooks/signature-verification
 */
export function createPaddleVerifier(secrets: readonly string[]): Verifier {
  return ({ body, headers, nowMs }) => {
    const header = headers.get('paddle-signature');
    if (!header) throw new AppError('missing_signature', MISSING_SIGNATURE);
    const parts = header.split(';').map((p) => p.trim().split('='));
    const ts = parts.find(([name]) => name === 'ts')?.[1];
    const signatures = parts.filter(([name, value]) => name === 'h1' && /^[0-9a-f]{64}$/.test(value ?? '')).map(([, value]) => value!);
    if (!ts || !/^\d{1,12}$/.test(ts) || signatures.length === 0)
      throw new AppError('invalid_signature', 'Paddle-Signature must look like "ts=<unix seconds>;h1=<hex signature>".');
    const signedPayload = Buffer.concat([Buffer.from(`${ts}:`), body]);
    if (!signatures.some((signature) => matchesAnySecret(signature, secrets, (secret) => hmac('sha256', secret, signedPayload, 'hex')))) {
      throw new AppError(
        'invalid_signature',
        'No Paddle-Signature h1 matches PADDLE_WEBHOOK_SECRET (the notification destination secret key). Check it and that the body is forwarded unchanged.',
      );
    }
    if (Math.abs(Math.floor(nowMs / 1000) - Number(ts)) > PADDLE_TOLERANCE_SECONDS) {
      throw new AppError(
        'timestamp_out_of_tolerance',
        `Paddle-Signature ts is more than ${PADDLE_TOLERANCE_SECONDS} s from now (Paddle's own limit); check the clock.`,
      );
    }
    const { text, value } = parseJsonObject(body);
    return {
      key: requireString(value, 'event_id', 'A Paddle notification'),
      type: requireString(value, 'event_type', 'A Paddle notification'),
      payloadJson: text,
    };
  };
}

function buildPaddleSample(type: string, nowMs: number): Record<string, unknown> {
  const at = new Date(nowMs).toISOString();
  const customer = providerId('ctm', 26).toLowerCase();
  const status = type === 'subscription.canceled' ? 'canceled' : 'active';
  const data =
    type === 'transaction.completed'
      ? {
          id: providerId('txn', 26).toLowerCase(),
          status: 'completed',
          customer_id: customer,
          currency_code: 'USD',
          details: { totals: { total: '2900' } },
          created_at: at,
          updated_at: at,
        }
      : {
          id: providerId('sub', 26).toLowerCase(),
          status,
          customer_id: customer,
          currency_code: 'USD',
          items: [{ price: { id: providerId('pri', 26).toLowerCase(), description: 'Pro' }, quantity: 1 }],
          custom_data: { email: samplePerson().email },
          created_at: at,
          updated_at: at,
          ...(status === 'canceled' ? { canceled_at: at } : {}),
        };
  return { event_id: providerId('evt', 26).toLowerCase(), event_type: type, occurred_at: at, notification_id: providerId('ntf', 26).toLowerCase(), data };
}

/** Paddle on `/webhooks/payments` with `PAYMENTS_PROVIDER=paddle`, secret `PADDLE_WEBHOOK_SECRET`. */
export const paddleProvider = defineProvider({
  title: 'Paddle',
  route: 'payments',
  name: 'paddle',
  secretEnv: ['PADDLE_WEBHOOK_SECRET'],
  body: 'json',
  credentialHeaders: ['paddle-signature'],
  missingCredentials: { code: 'missing_signature', message: MISSING_SIGNATURE },
  createVerifier: (setting) => createPaddleVerifier(setting.values),
  sampleTypes: ['subscription.created', 'subscription.updated', 'subscription.canceled', 'transaction.completed'],
  buildSample: buildPaddleSample,
  envelope: (type, nowMs) => ({ event_id: providerId('evt', 26).toLowerCase(), event_type: type, occurred_at: new Date(nowMs).toISOString(), data: {} }),
  sign: ({ body, secret, nowMs }) => {
    const ts = Math.floor(nowMs / 1000);
    return { 'paddle-signature': `ts=${ts};h1=${hmac('sha256', secret, `${ts}:${body}`, 'hex')}` };
  },
  openapi: {
    summary: 'Paddle notifications (PAYMENTS_PROVIDER=paddle)',
    description:
      "Secret PADDLE_WEBHOOK_SECRET (or PAYMENTS_WEBHOOK_SECRET). `ts` within 5 s, as Paddle's SDK checks. Idempotency key: `event_id`; type: `event_type`.",
    headers: [{ name: 'Paddle-Signature', description: '`ts=<unix seconds>;h1=<hex HMAC-SHA256 of ts:body>` (several h1 during a rotation)', required: true }],
  },
});
