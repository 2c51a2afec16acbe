import { randomUUID } from 'node:crypto';
import type { SecretSetting } from '../../config.js';
import { AppError } from '../../errors.js';
import { bearerToken, secureEqualAny } from '../../secure-compare.js';
import { parseJsonObject, requireString, type Verifier } from '../delivery.js';
import { createSigners, readSignedHeaders, verifyStandardSignature } from './standard-webhooks.js';

const CHANGE_TYPES = new Set(['INSERT', 'UPDATE', 'DELETE']);
/** An `Idempotency-Key` is stored as the event key: the inbox's unique index takes keys up to this length. */
const MAX_IDEMPOTENCY_KEY_CHARS = 255;

/**
 * The key of a bearer-authenticated delivery: the sender's `Idempotency-Key`
 * when it sends one, else a fresh one. pg_net sends each change once, so two
 * identical bodies are two real changes (A→B, B→A, A→B), never a retry.
 */
function unsignedDeliveryKey(headers: Headers): string {
  const offered = headers.get('idempotency-key');
  if (offered === null) return `delivery_${randomUUID()}`;
  const key = offered.trim();
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_CHARS) {
    throw new AppError('invalid_payload', `The Idempotency-Key header must be 1-${MAX_IDEMPOTENCY_KEY_CHARS} characters; leave it out to store every delivery as its own event.`);
  }
  return key;
}

/**
 * Supabase Database Webhooks (`{type, table, schema, record, old_record}`),
 * authenticated by `Authorization: Bearer <secret>` (the header you add in the
 * Supabase dashboard) or, when the sender signs, by a Standard Webhooks
 * signature. Key: `webhook-id` when signed, else the `Idempotency-Key` header,
 * else none (every delivery is its own event). A missing or wrong bearer is
 * an authentication failure: 401 (RFC 6750).
 * https://supabase.com/docs/guides/database/webhooks
 */
export function createDatabaseVerifier(setting: SecretSetting): Verifier {
  const signingSecrets = setting.values.filter((s) => s.startsWith('whsec_'));
  const signers = createSigners(signingSecrets, setting.envName);
  return ({ body, headers, nowMs, toleranceSeconds }) => {
    const signed = readSignedHeaders(headers);
    let key: string;
    if (signed && signers.length > 0) {
      key = verifyStandardSignature(signers, signed, body, nowMs, toleranceSeconds, 'webhook-id/webhook-timestamp/webhook-signature headers').id;
    } else {
      const authorization = headers.get('authorization');
      if (!authorization) {
        throw new AppError('unauthorized', 'Missing Authorization header: add "Authorization: Bearer <DATABASE_WEBHOOK_SECRET>" to the Supabase webhook.');
      }
      if (!secureEqualAny(bearerToken(authorization), setting.values)) {
        throw new AppError('unauthorized', 'The Authorization bearer token does not match DATABASE_WEBHOOK_SECRET.');
      }
      key = unsignedDeliveryKey(headers);
    }
    const { text, value } = parseJsonObject(body);
    const type = requireString(value, 'type', 'A database change');
    if (!CHANGE_TYPES.has(type)) {
      throw new AppError('invalid_payload', `A database change has type INSERT, UPDATE or DELETE, not "${type}".`);
    }
    requireString(value, 'table', 'A database change');
    requireString(value, 'schema', 'A database change');
    return { key, type, payloadJson: text };
  };
}
