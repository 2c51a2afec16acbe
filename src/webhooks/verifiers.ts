import { SECRET_ENV_NAMES, type Config, type Source } from '../config.js';
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
      return { ok: false, message: `Missing ${first}${alias}: set the signing secret to accept /webhooks/${source}.` };
    }
    return { ok: true, verify: make() };
  };
  return {
    payments: build('payments', () => createPaymentsVerifier(config.secrets.payments!.values)),
    auth: build('auth', () => createAuthVerifier(config.secrets.auth!)),
    database: build('database', () => createDatabaseVerifier(config.secrets.database!)),
  };
}
