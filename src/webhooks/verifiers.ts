import { SECRET_ENV_NAMES, type Config, type Source } from '../config.js';
import { AppError } from '../errors.js';
import type { Verifier } from './delivery.js';
import { createAuthVerifier } from './providers/auth.js';
import { createDatabaseVerifier } from './providers/database.js';
import { createPaymentsVerifier } from './providers/payments.js';

/** A source's verifier, or the fix to print when its secret is not configured. */
export type SourceVerifier = { ok: true; verify: Verifier } | { ok: false; message: string };

/** Build each receiver's verifier from config once; a malformed secret throws `ConfigError` at start-up. */
export function createVerifiers(config: Config): Record<Source, SourceVerifier> {
  const build = (source: Source, make: () => Verifier): SourceVerifier => {
    if (!config.secrets[source]) {
      const [first, ...aliases] = SECRET_ENV_NAMES[source];
      const alias = aliases.length > 0 ? ` (or ${aliases.join(' or ')})` : '';
      return { ok: false, message: `Missing ${first}${alias}: set the signing secret to accept /webhooks/${source}, then restart hookrun (it reads its settings once, at start-up).` };
    }
    return { ok: true, verify: make() };
  };
  return {
    payments: build('payments', () => createPaymentsVerifier(config.secrets.payments!.values)),
    auth: build('auth', () => createAuthVerifier(config.secrets.auth!)),
    database: build('database', () => createDatabaseVerifier(config.secrets.database!)),
  };
}

const SIGNATURE_HEADERS: Record<Source, readonly string[]> = {
  payments: ['stripe-signature'],
  auth: ['svix-signature', 'webhook-signature'],
  database: ['authorization', 'webhook-signature'],
};

/**
 * Refuse a delivery that carries none of its source's credential headers
 * BEFORE its body is read: without this, anyone could make hookrun buffer
 * 1 MiB per connection with no signature at all (security review: 2,000
 * stalled uploads took RSS to 2.3 GB). Same answer as the verifier would give.
 */
export function missingCredentials(source: Source, headers: Headers): AppError | undefined {
  if (SIGNATURE_HEADERS[source].some((name) => headers.has(name))) return undefined;
  if (source === 'database') {
    return new AppError('unauthorized', 'Missing Authorization header: add "Authorization: Bearer <DATABASE_WEBHOOK_SECRET>" to the Supabase webhook.');
  }
  const names = source === 'payments' ? 'Stripe-Signature header' : 'svix-id/svix-timestamp/svix-signature (or webhook-*) headers';
  return new AppError('missing_signature', `Missing ${names}: send the request exactly as the provider signs it.`);
}
