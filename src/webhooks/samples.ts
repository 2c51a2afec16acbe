import { type Config } from '../config/config.js';
import { defaultProvider, providerFor, type Source, SOURCES } from './providers/index.js';
import { ConfigError } from '../errors.js';
import type { ProviderDefinition } from './provider.js';
import { deepMerge, providerId } from './sample-events/ids.js';

/**
 * Every event type `hookrun send` can build a full sample of, per source
 * (the types the shipped handlers know), from each provider's definition.
 */
export const SAMPLE_TYPES = Object.fromEntries(SOURCES.map((source) => [source, defaultProvider(source).sampleTypes ?? []])) as Record<
  Source,
  readonly string[]
>;

/** Thrown for a type with no sample and no overrides to build one from; the CLI turns it into a usage error. */
export class UnknownSampleTypeError extends Error {
  constructor(source: Source, type: string, provider: ProviderDefinition = defaultProvider(source)) {
    super(
      `No sample for ${source} (${provider.title}) event type "${type}". Known types: ${provider.sampleTypes?.join(', ') || 'none'} (or pass --data with the event's fields).`,
    );
    this.name = 'UnknownSampleTypeError';
  }
}

/** Normalise a type as the provider spells it (Supabase change types are upper case). */
export function normalizeSampleType(source: Source, type: string, provider: ProviderDefinition = defaultProvider(source)): string {
  return provider.normalizeType?.(type) ?? type;
}

/**
 * A realistic event of `type` as the provider would post it, with fresh ids on
 * every call (so each send is a new delivery). `overrides` is deep-merged into
 * the whole event (objects merge, arrays and values replace): pass
 * `{ data: { id: "user_…" } }` to target one Clerk user, `{ data: { object:
 * { customer: "cus_…" } } }` for Stripe, `{ table: "orders" }` for Supabase.
 * A type with no sample is accepted only with overrides (an envelope + them).
 */
export function buildSample(
  source: Source,
  type: string,
  overrides?: unknown,
  nowMs: number = Date.now(),
  provider: ProviderDefinition = defaultProvider(source),
): Record<string, unknown> {
  const normalized = normalizeSampleType(source, type, provider);
  let event: Record<string, unknown>;
  const sample = provider.sampleTypes?.includes(normalized) ? provider.buildSample?.(normalized, nowMs) : undefined;
  if (sample) event = sample;
  else if (overrides !== undefined) event = provider.envelope(normalized, nowMs);
  else throw new UnknownSampleTypeError(source, type, provider);
  return overrides === undefined ? event : deepMerge(event, overrides);
}

/** The body the provider would post for `event`: JSON, or a form (Twilio). */
export function encodeSample(source: Source, event: Record<string, unknown>, provider: ProviderDefinition = defaultProvider(source)): string {
  return provider.encode?.(event) ?? JSON.stringify(event);
}

/** What `signSample` signs with; both come from config unless a test passes them. */
export interface SignOptions {
  nowMs?: number;
  /** Message id for Standard Webhooks / Svix, GitHub's delivery id, … (`msg_…` when not given): the event's key. */
  messageId?: string;
  /** The event's hookrun type, for senders that carry it in a header (GitHub, Shopify); default the body's `type`. */
  type?: string;
  /** The URL the request goes to, for schemes that sign it (Twilio). PUBLIC_URL, when set, wins: the server checks against it. */
  url?: string;
}

function bodyType(body: string): string {
  try {
    const type = (JSON.parse(body) as { type?: unknown }).type;
    return typeof type === 'string' ? type : '';
  } catch {
    return '';
  }
}

function activeSecret(config: Config, source: Source, provider: ProviderDefinition): string {
  const setting = config.secrets[source];
  const secret = setting && (provider.secrets?.(setting.values) ?? setting.values)[0];
  if (!secret) {
    const [first, ...aliases] = config.secretEnvNames[source];
    const alias = aliases.length > 0 ? ` (or ${aliases.join(' or ')})` : '';
    throw new ConfigError(`Missing ${first}${alias}: set the same signing secret the server uses, so the sample can be signed.`);
  }
  return secret;
}

/**
 * The headers the provider would send with `body`, signed with the first
 * (active) secret of config as the provider configured for the route signs (its definition's `sign`,
 * with the provider's own library where one exists: stripe-node's
 * `generateTestHeaderString`, standardwebhooks' `sign` for Svix and
 * Standard Webhooks, a bearer for Supabase's dashboard webhooks).
 */
export function signSample(source: Source, body: string, config: Config, options: SignOptions = {}): Record<string, string> {
  const provider = providerFor(config, source);
  const path = `/webhooks/${source}`;
  const url = config.publicUrl ? new URL(path, config.publicUrl).toString() : (options.url ?? `http://localhost:${config.port}${path}`);
  const type = options.type ?? bodyType(body);
  const signed = provider.sign({
    body,
    secret: activeSecret(config, source, provider),
    nowMs: options.nowMs ?? Date.now(),
    messageId: options.messageId ?? providerId('msg', 27),
    url,
    type,
  });
  const contentType = provider.body === 'form' ? 'application/x-www-form-urlencoded' : 'application/json';
  return { 'content-type': contentType, 'user-agent': 'hookrun-send', ...signed };
}
