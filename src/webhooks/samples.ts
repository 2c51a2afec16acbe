import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import { SECRET_ENV_NAMES, type Config, type Source } from '../config.js';
import { ConfigError } from '../errors.js';
import { buildAuthSample } from './sample-events/auth.js';
import { buildDatabaseSample } from './sample-events/database.js';
import { deepMerge, providerId } from './sample-events/ids.js';
import { buildPaymentsSample } from './sample-events/payments.js';
import { SAMPLE_TYPES } from './sample-events/types.js';

export { SAMPLE_TYPES };

/** Thrown for a type with no sample and no overrides to build one from; the CLI turns it into a usage error. */
export class UnknownSampleTypeError extends Error {
  constructor(source: Source, type: string) {
    super(`No sample for ${source} event type "${type}". Known types: ${SAMPLE_TYPES[source].join(', ')} (or pass --data with the event's fields).`);
    this.name = 'UnknownSampleTypeError';
  }
}

/** Normalise a type as the provider spells it (Supabase change types are upper case). */
export function normalizeSampleType(source: Source, type: string): string {
  return source === 'database' ? type.toUpperCase() : type;
}

function envelope(source: Source, type: string, nowMs: number): Record<string, unknown> {
  if (source === 'payments') return { id: providerId('evt', 24), object: 'event', api_version: Stripe.API_VERSION, created: Math.floor(nowMs / 1000), data: { object: {} }, livemode: false, type };
  if (source === 'auth') return { data: {}, object: 'event', timestamp: nowMs, type };
  return { type, table: 'profiles', schema: 'public', record: null, old_record: null };
}

/**
 * A realistic event of `type` as the provider would post it, with fresh ids on
 * every call (so each send is a new delivery). `overrides` is deep-merged into
 * the whole event (objects merge, arrays and values replace): pass
 * `{ data: { id: "user_…" } }` to target one Clerk user, `{ data: { object:
 * { customer: "cus_…" } } }` for Stripe, `{ table: "orders" }` for Supabase.
 * A type with no sample is accepted only with overrides (an envelope + them).
 */
export function buildSample(source: Source, type: string, overrides?: unknown, nowMs: number = Date.now()): Record<string, unknown> {
  const normalized = normalizeSampleType(source, type);
  let event: Record<string, unknown>;
  if (SAMPLE_TYPES[source].includes(normalized)) {
    if (source === 'payments') event = buildPaymentsSample(normalized, nowMs);
    else if (source === 'auth') event = buildAuthSample(normalized, nowMs);
    else event = buildDatabaseSample(normalized, nowMs);
  } else if (overrides !== undefined) {
    event = envelope(source, normalized, nowMs);
  } else {
    throw new UnknownSampleTypeError(source, type);
  }
  return overrides === undefined ? event : deepMerge(event, overrides);
}

/** What `signSample` signs with; both come from config unless a test passes them. */
export interface SignOptions {
  nowMs?: number;
  /** Message id for Standard Webhooks / Svix (`msg_…` when not given). */
  messageId?: string;
}

function activeSecret(config: Config, source: Source): string {
  const setting = config.secrets[source];
  const secret = setting?.values[0];
  if (!secret) {
    const [first, ...aliases] = SECRET_ENV_NAMES[source];
    const alias = aliases.length > 0 ? ` (or ${aliases.join(' or ')})` : '';
    throw new ConfigError(`Missing ${first}${alias}: set the same signing secret the server uses, so the sample can be signed.`);
  }
  return secret;
}

function standardHeaders(prefix: 'svix' | 'webhook', secret: string, body: string, nowMs: number, messageId: string): Record<string, string> {
  const date = new Date(Math.floor(nowMs / 1000) * 1000);
  return {
    [`${prefix}-id`]: messageId,
    [`${prefix}-timestamp`]: String(Math.floor(nowMs / 1000)),
    [`${prefix}-signature`]: new Webhook(secret).sign(messageId, date, body),
  };
}

/**
 * The headers the provider would send with `body`, signed with the first
 * (active) secret of config by the providers' own libraries: Stripe's
 * `generateTestHeaderString` (`Stripe-Signature`), standardwebhooks' `sign`
 * with Svix's `svix-*` headers for auth, and for database either
 * `Authorization: Bearer <secret>` (what the Supabase dashboard sends) or
 * `webhook-*` headers when the secret is a `whsec_` signing secret.
 */
export function signSample(source: Source, body: string, config: Config, options: SignOptions = {}): Record<string, string> {
  const secret = activeSecret(config, source);
  const nowMs = options.nowMs ?? Date.now();
  const messageId = options.messageId ?? providerId('msg', 27);
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'hookrun-send' };
  if (source === 'payments') {
    headers['stripe-signature'] = Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: Math.floor(nowMs / 1000) });
  } else if (source === 'auth') {
    Object.assign(headers, standardHeaders('svix', secret, body, nowMs, messageId));
  } else if (secret.startsWith('whsec_')) {
    Object.assign(headers, standardHeaders('webhook', secret, body, nowMs, messageId));
  } else {
    headers.authorization = `Bearer ${secret}`;
  }
  return headers;
}
