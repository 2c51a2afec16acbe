import { AppError } from '../../errors.js';
import { parseJsonObject, requireString, type Verifier } from '../delivery.js';
import { defineProvider } from '../provider.js';
import { providerId, samplePerson } from '../sample-events/ids.js';
import { hmac, matchesAnySecret } from './hmac.js';

/** The answer to a delivery without the signature header: from the verifier, and before the body is read. */
const MISSING_SIGNATURE = 'Missing WorkOS-Signature header: send the request exactly as WorkOS signs it.';

/** WorkOS's SDK default: a signature at most 180 s old. */
export const WORKOS_TOLERANCE_SECONDS = 180;

/**
 * WorkOS: `WorkOS-Signature: t=<unix ms>, v1=<hex>`, the HMAC-SHA256 of
 * `t.body` under the endpoint's secret, within 180 s (the SDK's default).
 * Key: the event `id`; type: `event` (`user.created`).
 * https://workos.com/docs/events/data-syncing/webhooks
 */
export function createWorkosVerifier(secrets: readonly string[]): Verifier {
  return ({ body, headers, nowMs }) => {
    const header = headers.get('workos-signature');
    if (!header) throw new AppError('missing_signature', MISSING_SIGNATURE);
    const parts = Object.fromEntries(header.split(',').map((p) => p.trim().split('=') as [string, string]));
    const t = parts.t;
    const v1 = parts.v1;
    if (!t || !/^\d{1,15}$/.test(t) || !v1 || !/^[0-9a-f]{64}$/.test(v1))
      throw new AppError('invalid_signature', 'WorkOS-Signature must look like "t=<unix ms>, v1=<hex signature>".');
    if (!matchesAnySecret(v1, secrets, (secret) => hmac('sha256', secret, Buffer.concat([Buffer.from(`${t}.`), body]), 'hex'))) {
      throw new AppError('invalid_signature', 'WorkOS-Signature does not match WORKOS_WEBHOOK_SECRET. Check it and that the body is forwarded unchanged.');
    }
    if (Math.abs(nowMs - Number(t)) > WORKOS_TOLERANCE_SECONDS * 1000) {
      throw new AppError(
        'timestamp_out_of_tolerance',
        `WorkOS-Signature t is more than ${WORKOS_TOLERANCE_SECONDS} s from now; check the clock, or resend the event from the WorkOS dashboard.`,
      );
    }
    const { text, value } = parseJsonObject(body);
    return { key: requireString(value, 'id', 'A WorkOS event'), type: requireString(value, 'event', 'A WorkOS event'), payloadJson: text };
  };
}

function buildWorkosSample(type: string, nowMs: number): Record<string, unknown> {
  const person = samplePerson();
  const at = new Date(nowMs).toISOString();
  const data = type.startsWith('organization.')
    ? {
        object: 'organization',
        id: providerId('org', 26).toUpperCase().replace('ORG_', 'org_'),
        name: `${person.lastName} Inc.`,
        created_at: at,
        updated_at: at,
      }
    : {
        object: 'user',
        id: providerId('user', 26).toUpperCase().replace('USER_', 'user_'),
        email: person.email,
        first_name: person.firstName,
        last_name: person.lastName,
        email_verified: true,
        created_at: at,
        updated_at: at,
      };
  return { id: providerId('event', 26).toUpperCase().replace('EVENT_', 'event_'), event: type, data, created_at: at };
}

/** WorkOS on `/webhooks/auth` with `AUTH_PROVIDER=workos`, secret `WORKOS_WEBHOOK_SECRET`. */
export const workosProvider = defineProvider({
  title: 'WorkOS',
  route: 'auth',
  name: 'workos',
  secretEnv: ['WORKOS_WEBHOOK_SECRET'],
  body: 'json',
  credentialHeaders: ['workos-signature'],
  missingCredentials: { code: 'missing_signature', message: MISSING_SIGNATURE },
  createVerifier: (setting) => createWorkosVerifier(setting.values),
  sampleTypes: ['user.created', 'user.updated', 'user.deleted', 'organization.created'],
  buildSample: buildWorkosSample,
  envelope: (type, nowMs) => ({ id: providerId('event', 26), event: type, data: {}, created_at: new Date(nowMs).toISOString() }),
  sign: ({ body, secret, nowMs }) => ({ 'workos-signature': `t=${nowMs}, v1=${hmac('sha256', secret, `${nowMs}.${body}`, 'hex')}` }),
  openapi: {
    summary: 'WorkOS events (AUTH_PROVIDER=workos)',
    description: 'Secret WORKOS_WEBHOOK_SECRET (or AUTH_WEBHOOK_SECRET). `t` within 180 s. Idempotency key: the event `id`; type: `event`.',
    headers: [{ name: 'WorkOS-Signature', description: '`t=<unix ms>, v1=<hex HMAC-SHA256 of t.body>`', required: true }],
  },
});
