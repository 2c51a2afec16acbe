import type { Verifier } from '../delivery.js';
import { defineProvider, type SecretSetting } from '../provider.js';
import { samplePerson, uuid } from '../sample-events/ids.js';
import { createStandardVerifier, signStandard } from './standard-webhooks.js';

/** The dashboard shows a secret as `v1,whsec_…` and several as `v1,whsec_a|v1,whsec_b`; standardwebhooks takes each `whsec_…`. */
function hookSecrets(values: readonly string[]): string[] {
  return values
    .join(',')
    .split(/[|,]/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0 && s !== 'v1');
}

/** `send_email.<email_action_type>` (signup, recovery, magiclink, …), `send_sms`, else `auth_hook`. */
function hookType(value: Record<string, unknown>): string {
  const action = (value.email_data as { email_action_type?: unknown } | undefined)?.email_action_type;
  if (typeof action === 'string' && /^[a-z_]{1,40}$/.test(action)) return `send_email.${action}`;
  if (value.email_data) return 'send_email';
  if (value.sms) return 'send_sms';
  return 'auth_hook';
}

/**
 * Supabase Auth's HTTP hooks (Send Email, Send SMS) sign with Standard
 * Webhooks; the secret is shown as `v1,whsec_…`. Key: `webhook-id`. Their
 * payload holds one-time codes: they are kept like any event, for
 * EVENT_RETENTION_DAYS. Hooks that must answer with data (custom access
 * token) are not for an inbox. https://supabase.com/docs/guides/auth/auth-hooks
 */
export function createSupabaseAuthVerifier(setting: SecretSetting): Verifier {
  return createStandardVerifier(hookSecrets(setting.values), setting.envName, 'webhook-id/webhook-timestamp/webhook-signature headers', hookType);
}

function buildSupabaseAuthSample(type: string, nowMs: number): Record<string, unknown> {
  const person = samplePerson();
  const at = new Date(nowMs).toISOString();
  const user = { id: uuid(), aud: 'authenticated', role: 'authenticated', email: person.email, phone: '', created_at: at, updated_at: at };
  if (type === 'send_sms') return { user: { ...user, phone: '15558675310' }, sms: { otp: '561166' } };
  const action = type.slice('send_email.'.length) || 'signup';
  return {
    user,
    email_data: {
      token: '305805',
      token_hash: uuid().replace(/-/g, ''),
      redirect_to: 'http://localhost:3000/',
      email_action_type: action,
      site_url: 'http://localhost:3000',
      token_new: '',
      token_hash_new: '',
    },
  };
}

/** Supabase Auth hooks on `/webhooks/auth` with `AUTH_PROVIDER=supabase`, secret `SUPABASE_AUTH_HOOK_SECRET`. */
export const supabaseAuthProvider = defineProvider({
  title: 'Supabase Auth hooks',
  route: 'auth',
  name: 'supabase',
  secretEnv: ['SUPABASE_AUTH_HOOK_SECRET'],
  body: 'json',
  credentialHeaders: ['webhook-signature'],
  missingCredentials: {
    code: 'missing_signature',
    message: 'Missing webhook-id/webhook-timestamp/webhook-signature headers: send the request exactly as Supabase Auth signs it.',
  },
  secrets: hookSecrets,
  createVerifier: (setting) => createSupabaseAuthVerifier(setting),
  sampleTypes: ['send_email.signup', 'send_email.recovery', 'send_email.magiclink', 'send_sms'],
  buildSample: buildSupabaseAuthSample,
  envelope: () => ({ user: { id: uuid() } }),
  sign: ({ body, secret, nowMs, messageId }) => signStandard('webhook', secret, body, nowMs, messageId),
  openapi: {
    summary: 'Supabase Auth hooks (AUTH_PROVIDER=supabase)',
    description:
      'Standard Webhooks; secret SUPABASE_AUTH_HOOK_SECRET (`v1,whsec_…`, or AUTH_WEBHOOK_SECRET). Idempotency key: `webhook-id`; type `send_email.<action>` or `send_sms`.',
    headers: [
      { name: 'webhook-id', description: 'message id: the idempotency key', required: true },
      { name: 'webhook-timestamp', description: 'unix seconds', required: true },
      { name: 'webhook-signature', description: '`v1,<base64>` list', required: true },
    ],
  },
});
