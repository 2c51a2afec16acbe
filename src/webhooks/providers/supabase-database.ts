import { randomUUID } from 'node:crypto';
import { AppError } from '../../errors.js';
import { bearerToken, secureEqualAny } from '../../secure-compare.js';
import { parseJsonObject, requireString, type Verifier } from '../delivery.js';
import { defineProvider, type SecretSetting } from '../provider.js';
import { buildSupabaseDatabaseSample } from '../sample-events/supabase-database.js';
import { SUPABASE_DATABASE_SAMPLE_TYPES } from '../sample-events/types.js';
import { createSigners, readSignedHeaders, signStandard, verifyStandardSignature } from './standard-webhooks.js';

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
    throw new AppError(
      'invalid_payload',
      `The Idempotency-Key header must be 1-${MAX_IDEMPOTENCY_KEY_CHARS} characters; leave it out to store every delivery as its own event.`,
    );
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
export function createSupabaseDatabaseVerifier(setting: SecretSetting): Verifier {
  const signingSecrets = setting.values.filter((s) => s.startsWith('whsec_'));
  // A whsec_ key only signs: offered as a bearer it would skip the timestamp check, and a captured request would replay forever.
  const bearers = setting.values.filter((s) => !s.startsWith('whsec_'));
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
      if (bearers.length === 0) {
        throw new AppError(
          'unauthorized',
          `${setting.envName} is a whsec_ signing key, which is never accepted as a bearer: sign deliveries with Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature), or add a bearer secret of 32+ characters to ${setting.envName} (comma-separated).`,
        );
      }
      if (!secureEqualAny(bearerToken(authorization), bearers)) {
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

/** Supabase Database Webhooks on `/webhooks/database` (bearer or Standard Webhooks); the WAL capture stores the same shape. */
export const supabaseDatabaseProvider = defineProvider({
  title: 'Supabase Database Webhooks',
  route: 'database',
  name: 'supabase',
  secretEnv: ['DATABASE_WEBHOOK_SECRET'],
  body: 'json',
  credentialHeaders: ['authorization', 'webhook-signature'],
  missingCredentials: {
    code: 'unauthorized',
    message: 'Missing Authorization header: add "Authorization: Bearer <DATABASE_WEBHOOK_SECRET>" to the Supabase webhook.',
  },
  createVerifier: (setting) => createSupabaseDatabaseVerifier(setting),
  sampleTypes: SUPABASE_DATABASE_SAMPLE_TYPES,
  normalizeType: (type) => type.toUpperCase(),
  buildSample: buildSupabaseDatabaseSample,
  envelope: (type) => ({ type, table: 'profiles', schema: 'public', record: null, old_record: null }),
  // What the Supabase dashboard sends (a bearer), or Standard Webhooks headers when the secret is a whsec_ signing key.
  sign: ({ body, secret, nowMs, messageId }) =>
    secret.startsWith('whsec_') ? signStandard('webhook', secret, body, nowMs, messageId) : { authorization: `Bearer ${secret}` },
  openapi: {
    summary: 'Supabase Database Webhooks',
    description:
      'Body `{type: INSERT|UPDATE|DELETE, table, schema, record, old_record}`; secret DATABASE_WEBHOOK_SECRET. A missing or wrong bearer answers 401 unauthorized. Idempotency key: `webhook-id` when signed, else the `Idempotency-Key` header, else none: every delivery is its own event (pg_net sends each change once).',
    headers: [
      { name: 'Authorization', description: '`Bearer <DATABASE_WEBHOOK_SECRET>`, unless signed' },
      { name: 'Idempotency-Key', description: 'optional, 1-255 characters: the key of an unsigned delivery (a retry with the same key is a duplicate)' },
      { name: 'webhook-id', description: 'Standard Webhooks message id (when the secret is `whsec_…`)' },
      { name: 'webhook-timestamp', description: 'unix seconds' },
      { name: 'webhook-signature', description: '`v1,<base64>` list' },
    ],
  },
});
