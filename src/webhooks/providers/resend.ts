import { requireString, type Verifier } from '../delivery.js';
import { defineProvider, type SecretSetting } from '../provider.js';
import { providerId, samplePerson, uuid } from '../sample-events/ids.js';
import { createStandardVerifier, signStandard } from './standard-webhooks.js';

/**
 * Resend signs with Svix (`svix-id`, `svix-timestamp`, `svix-signature`,
 * secret `whsec_…`), verified by the standardwebhooks library like Clerk's.
 * Key: the message id (kept across Resend's retries); type: `type`
 * (`email.delivered`). https://resend.com/docs/dashboard/webhooks/verify-webhooks-requests
 */
export function createResendVerifier(setting: SecretSetting): Verifier {
  return createStandardVerifier(setting.values, setting.envName, 'svix-id/svix-timestamp/svix-signature headers', (value) =>
    requireString(value, 'type', 'A Resend event'),
  );
}

function buildResendSample(type: string, nowMs: number): Record<string, unknown> {
  const person = samplePerson();
  const at = new Date(nowMs).toISOString();
  const data: Record<string, unknown> = {
    email_id: uuid(),
    from: 'Hookrun <hello@example.com>',
    to: [person.email],
    subject: 'Welcome to hookrun',
    created_at: at,
  };
  if (type === 'email.bounced') data.bounce = { message: 'The recipient mailbox does not exist.', type: 'Permanent', subType: 'General' };
  return { type, created_at: at, data };
}

/** Resend on `/webhooks/resend`, secret `RESEND_WEBHOOK_SECRET`. */
export const resendProvider = defineProvider({
  title: 'Resend',
  route: 'resend',
  name: 'resend',
  secretEnv: ['RESEND_WEBHOOK_SECRET'],
  body: 'json',
  credentialHeaders: ['svix-signature', 'webhook-signature'],
  missingCredentials: {
    code: 'missing_signature',
    message: 'Missing svix-id/svix-timestamp/svix-signature headers: send the request exactly as Resend signs it.',
  },
  createVerifier: (setting) => createResendVerifier(setting),
  sampleTypes: ['email.sent', 'email.delivered', 'email.bounced', 'email.complained'],
  buildSample: buildResendSample,
  envelope: (type, nowMs) => ({ type, created_at: new Date(nowMs).toISOString(), data: { email_id: providerId('em', 20) } }),
  sign: ({ body, secret, nowMs, messageId }) => signStandard('svix', secret, body, nowMs, messageId),
  openapi: {
    summary: 'Resend email events',
    description: "Svix signature; secret RESEND_WEBHOOK_SECRET (`whsec_…`). Idempotency key: the message id. Type: the payload's `type` (`email.delivered`).",
    headers: [
      { name: 'svix-id', description: 'message id: the idempotency key', required: true },
      { name: 'svix-timestamp', description: 'unix seconds', required: true },
      { name: 'svix-signature', description: 'space-separated `v1,<base64>` list', required: true },
    ],
  },
});
