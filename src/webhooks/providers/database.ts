import { createHash, timingSafeEqual } from 'node:crypto';
import type { SecretSetting } from '../../config.js';
import { AppError } from '../../errors.js';
import { parseJsonObject, requireString, type Verifier } from '../delivery.js';
import { createSigners, readSignedHeaders, verifyStandardSignature } from './standard-webhooks.js';

const CHANGE_TYPES = new Set(['INSERT', 'UPDATE', 'DELETE']);

function bearerMatches(header: string, secrets: string[]): boolean {
  const offered = Buffer.from(header.slice('Bearer '.length).trim());
  let matched = false;
  for (const secret of secrets) {
    const expected = Buffer.from(secret);
    if (offered.length === expected.length && timingSafeEqual(offered, expected)) matched = true;
  }
  return matched;
}

/**
 * Supabase Database Webhooks (`{type, table, schema, record, old_record}`),
 * authenticated by `Authorization: Bearer <secret>` (the header you add in the
 * Supabase dashboard) or, when the sender signs, by a Standard Webhooks
 * signature. Key: `webhook-id` when signed, else the SHA-256 of the body.
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
        throw new AppError('missing_signature', 'Missing Authorization header: add "Authorization: Bearer <DATABASE_WEBHOOK_SECRET>" to the Supabase webhook.');
      }
      if (!/^Bearer /i.test(authorization) || !bearerMatches(authorization, setting.values)) {
        throw new AppError('invalid_signature', 'The Authorization bearer token does not match DATABASE_WEBHOOK_SECRET.');
      }
      key = createHash('sha256').update(body).digest('hex');
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
