import { type Config } from '../config/config.js';
import { providerFor, type Source, SOURCES } from './providers/index.js';
import { AppError } from '../errors.js';
import type { Verifier } from './delivery.js';
import type { ProviderDefinition } from './provider.js';
import { customProvider } from './providers/custom.js';

/** A source's verifier, or the fix to print when its secret is not configured; with the provider configured for it. */
export type SourceVerifier = ({ ok: true; verify: Verifier } | { ok: false; message: string }) & { provider: ProviderDefinition };

/** Build each receiver's verifier from config once; a malformed secret throws `ConfigError` at start-up. */
export function createVerifiers(config: Config): Record<Source, SourceVerifier> {
  const build = (source: Source): SourceVerifier => {
    const provider = providerFor(config, source);
    const setting = config.secrets[source];
    if (!setting) {
      const [first, ...aliases] = config.secretEnvNames[source];
      const alias = aliases.length > 0 ? ` (or ${aliases.join(' or ')})` : '';
      return {
        ok: false,
        provider,
        message: `Missing ${first}${alias}: set the signing secret to accept /webhooks/${source}, then restart hookrun (it reads its settings once, at start-up).`,
      };
    }
    return { ok: true, provider, verify: provider.createVerifier(setting, { publicUrl: config.publicUrl }) };
  };
  return Object.fromEntries(SOURCES.map((source) => [source, build(source)])) as Record<Source, SourceVerifier>;
}

/**
 * Refuse a delivery that carries none of its source's credential headers
 * BEFORE its body is read: without this, anyone could make hookrun buffer
 * 1 MiB per connection with no signature at all (security review: 2,000
 * stalled uploads took RSS to 2.3 GB). Same answer as the verifier would give.
 */
export function missingCredentials(provider: ProviderDefinition, headers: Headers): AppError | undefined {
  if (provider.credentialHeaders.some((name) => headers.has(name))) return undefined;
  return new AppError(provider.missingCredentials.code, provider.missingCredentials.message);
}

/** The receivers of platform.json `webhooks`, each with its verifier (or the fix when its secret is not set). */
export function createCustomVerifiers(config: Pick<Config, 'customWebhooks' | 'publicUrl'>): Array<{ route: string; verifier: SourceVerifier }> {
  return config.customWebhooks.map((scheme) => {
    const provider = customProvider(scheme);
    const verifier: SourceVerifier = scheme.secret
      ? { ok: true, provider, verify: provider.createVerifier(scheme.secret, { publicUrl: config.publicUrl }) }
      : {
          ok: false,
          provider,
          message: `Missing ${scheme.secretEnv}: set the secret platform.json names for /webhooks/${scheme.route}, then restart hookrun.`,
        };
    return { route: scheme.route, verifier };
  });
}
