import { requireString, type Verifier } from '../delivery.js';
import { defineProvider, type SecretSetting } from '../provider.js';
import { buildClerkSample } from '../sample-events/clerk.js';
import { CLERK_SAMPLE_TYPES } from '../sample-events/types.js';
import { createStandardVerifier, signStandard } from './standard-webhooks.js';

/**
 * The identity provider's scheme: Svix (Clerk) `svix-id/-timestamp/-signature`
 * or their Standard Webhooks twins `webhook-*`. The idempotency key is the
 * message id, which Svix keeps across retries.
 * https://clerk.com/docs/webhooks/sync-data
 */
export function createClerkVerifier(setting: SecretSetting): Verifier {
  const hint = 'svix-id/svix-timestamp/svix-signature (or webhook-id/webhook-timestamp/webhook-signature) headers';
  return createStandardVerifier(setting.values, setting.envName, hint, (value) => requireString(value, 'type', 'An auth event'));
}

/** Clerk (or any Svix / Standard Webhooks sender) on `/webhooks/auth`: key the message id, type the payload's `type`. */
export const clerkProvider = defineProvider({
  title: 'Clerk',
  route: 'auth',
  name: 'clerk',
  secretEnv: ['CLERK_WEBHOOK_SIGNING_SECRET', 'CLERK_WEBHOOK_SECRET'],
  body: 'json',
  credentialHeaders: ['svix-signature', 'webhook-signature'],
  missingCredentials: {
    code: 'missing_signature',
    message: 'Missing svix-id/svix-timestamp/svix-signature (or webhook-*) headers: send the request exactly as the provider signs it.',
  },
  createVerifier: (setting) => createClerkVerifier(setting),
  sampleTypes: CLERK_SAMPLE_TYPES,
  buildSample: buildClerkSample,
  envelope: (type, nowMs) => ({ data: {}, object: 'event', timestamp: nowMs, type }),
  sign: ({ body, secret, nowMs, messageId }) => signStandard('svix', secret, body, nowMs, messageId),
  openapi: {
    summary: 'Clerk / Svix / Standard Webhooks events',
    description: 'Secret AUTH_WEBHOOK_SECRET (or CLERK_WEBHOOK_SIGNING_SECRET, CLERK_WEBHOOK_SECRET). Idempotency key: the message id.',
    headers: [
      { name: 'svix-id', description: 'message id (or `webhook-id`)' },
      { name: 'svix-timestamp', description: 'unix seconds (or `webhook-timestamp`)' },
      { name: 'svix-signature', description: 'space-separated `v1,<base64>` list (or `webhook-signature`)' },
    ],
  },
});
