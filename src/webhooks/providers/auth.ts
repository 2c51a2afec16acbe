import type { SecretSetting } from '../../config.js';
import { parseJsonObject, requireString, type Verifier } from '../delivery.js';
import { createSigners, readSignedHeaders, verifyStandardSignature } from './standard-webhooks.js';

/**
 * The identity provider's scheme: Svix (Clerk) `svix-id/-timestamp/-signature`
 * or their Standard Webhooks twins `webhook-*`. The idempotency key is the
 * message id, which Svix keeps across retries.
 * https://clerk.com/docs/webhooks/sync-data
 */
export function createAuthVerifier(setting: SecretSetting): Verifier {
  const signers = createSigners(setting.values, setting.envName);
  return ({ body, headers, nowMs, toleranceSeconds }) => {
    const signed = verifyStandardSignature(
      signers,
      readSignedHeaders(headers) ?? {},
      body,
      nowMs,
      toleranceSeconds,
      'svix-id/svix-timestamp/svix-signature (or webhook-id/webhook-timestamp/webhook-signature) headers',
    );
    const { text, value } = parseJsonObject(body);
    return { key: signed.id, type: requireString(value, 'type', 'An auth event'), payloadJson: text };
  };
}
