import { Webhook } from 'standardwebhooks';
import { AppError } from '../../errors.js';
import { ConfigError } from '../../errors.js';
import { secureEqual } from '../../secure-compare.js';
import { parseJsonObject, type Verifier } from '../delivery.js';

/** The signed headers of one delivery, from either the `svix-*` or the `webhook-*` family. */
export interface SignedHeaders {
  id: string;
  timestamp: string;
  signature: string;
}

/** Pick `svix-*` (Clerk, Svix) or `webhook-*` (Standard Webhooks); undefined when no signature header is there at all. */
export function readSignedHeaders(headers: Headers): Partial<SignedHeaders> | undefined {
  for (const prefix of ['svix', 'webhook']) {
    const signature = headers.get(`${prefix}-signature`);
    const id = headers.get(`${prefix}-id`);
    const timestamp = headers.get(`${prefix}-timestamp`);
    if (signature !== null || id !== null || timestamp !== null) {
      return { id: id ?? undefined, timestamp: timestamp ?? undefined, signature: signature ?? undefined };
    }
  }
  return undefined;
}

/** Build one signer per secret up front, so a malformed secret stops start-up, not a request. */
export function createSigners(secrets: string[], envName: string): Webhook[] {
  return secrets.map((secret, index) => {
    try {
      return new Webhook(secret);
    } catch (error) {
      throw new ConfigError(
        `${envName} (secret ${index + 1}) is not a Standard Webhooks secret: ${(error as Error).message}. Copy the "whsec_…" signing secret from the provider's dashboard.`,
      );
    }
  });
}

/** The idempotency key is the message id: the inbox's unique index takes keys up to this length (and Svix's are ~30). */
const MAX_MESSAGE_ID_CHARS = 255;

/**
 * Verify a Standard Webhooks / Svix signature: `v1,<base64 HMAC-SHA256 of
 * id.timestamp.body>`, space-separated list, any may match, against any of the
 * rotation secrets. The HMAC is computed by the `standardwebhooks` package;
 * the clock and tolerance are ours so they can be injected and configured.
 * https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
 */
export function verifyStandardSignature(
  signers: Webhook[],
  signed: Partial<SignedHeaders>,
  body: Uint8Array,
  nowMs: number,
  toleranceSeconds: number,
  headerHint: string,
): SignedHeaders {
  const { id, timestamp, signature } = signed;
  if (!id || !timestamp || !signature) {
    throw new AppError('missing_signature', `Missing ${headerHint}: all three of id, timestamp and signature are required.`);
  }
  if (id.length > MAX_MESSAGE_ID_CHARS) {
    throw new AppError('invalid_signature', `The webhook message id is longer than ${MAX_MESSAGE_ID_CHARS} characters; no provider sends such ids.`);
  }
  if (!/^\d{1,12}$/.test(timestamp)) {
    throw new AppError('invalid_signature', 'The webhook timestamp header must be unix seconds.');
  }
  const seconds = Number(timestamp);
  const payload = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  const offered = signature.split(' ').flatMap((part) => {
    const [version, value] = part.split(',', 2);
    return version === 'v1' && value ? [value] : [];
  });
  const matched = signers.some((signer) => {
    const expected = signer.sign(id, new Date(seconds * 1000), payload).slice('v1,'.length);
    return offered.some((value) => secureEqual(value, expected));
  });
  if (!matched) {
    throw new AppError(
      'invalid_signature',
      'No v1 signature matches the configured secret. Check the signing secret and that the body is forwarded unchanged.',
    );
  }
  const skew = Math.floor(nowMs / 1000) - seconds;
  if (Math.abs(skew) > toleranceSeconds) {
    const side = skew > 0 ? 'old' : 'in the future';
    throw new AppError(
      'timestamp_out_of_tolerance',
      `The webhook timestamp is more than ${toleranceSeconds} s ${side}; check the clocks, or resend the message from the provider.`,
    );
  }
  return { id, timestamp, signature };
}

/** Headers a Svix (`svix-*`) or Standard Webhooks (`webhook-*`) sender adds, signed by the standardwebhooks library. */
export function signStandard(prefix: 'svix' | 'webhook', secret: string, body: string, nowMs: number, messageId: string): Record<string, string> {
  const date = new Date(Math.floor(nowMs / 1000) * 1000);
  return {
    [`${prefix}-id`]: messageId,
    [`${prefix}-timestamp`]: String(Math.floor(nowMs / 1000)),
    [`${prefix}-signature`]: new Webhook(secret).sign(messageId, date, body),
  };
}

/**
 * The verifier of a Svix / Standard Webhooks sender (Clerk, Resend, Polar,
 * Supabase Auth): the signature checked by `verifyStandardSignature`, the
 * message id as the key (kept across the sender's retries), the type read
 * from the verified JSON by `typeOf`.
 */
export function createStandardVerifier(secrets: string[], envName: string, headerHint: string, typeOf: (value: Record<string, unknown>) => string): Verifier {
  const signers = createSigners(secrets, envName);
  return ({ body, headers, nowMs, toleranceSeconds }) => {
    const signed = verifyStandardSignature(signers, readSignedHeaders(headers) ?? {}, body, nowMs, toleranceSeconds, headerHint);
    const { text, value } = parseJsonObject(body);
    return { key: signed.id, type: typeOf(value), payloadJson: text };
  };
}
