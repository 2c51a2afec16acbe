import { isIP } from 'node:net';
import { z } from 'zod';
import { ConfigError } from '../errors.js';

/** The environment as config.ts reads it. */
export type Env = Record<string, string | undefined>;

/**
 * `STRIPE_SECRET_KEY` (and `STRIPE_API_BASE`): payments handlers store what
 * the API says, not what the event says, and `hookrun reconcile` can list
 * missed events.
 */
export interface StripeSettings {
  secretKey: string;
  apiBase: URL | undefined;
}

/**
 * One variable through its zod schema: the value, or a ConfigError with the
 * setting's own message (its name, the value and the fix), which tells an
 * operator more than zod's generic issue text would.
 */
export function parseSetting<T>(schema: z.ZodType<T>, raw: string | undefined, message: string): T {
  const result = schema.safeParse(raw);
  if (!result.success) throw new ConfigError(message);
  return result.data;
}

/** Unset or empty: the default applies. */
const unset = z.union([z.undefined(), z.literal('')]);

/** A whole-number setting within bounds, or the default when unset. */
export function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const schema = z.union([unset.transform(() => fallback), z.coerce.number().int().min(min).max(max)]);
  return parseSetting(schema, env[name], `${name}="${env[name]}" is not valid: use a whole number from ${min} to ${max} (default ${fallback}).`);
}

/** An `on`/`off` setting, or the default when unset. */
export function readOnOff(env: Env, name: string, fallback: boolean): boolean {
  const schema = z.union([unset.transform(() => fallback), z.enum(['on', 'off']).transform((value) => value === 'on')]);
  return parseSetting(schema, env[name], `${name}="${env[name]}" is not valid: use "on" or "off" (default ${fallback ? 'on' : 'off'}).`);
}

/** One of `values` (LOG_LEVEL, SCHEDULER), or the default when unset. */
export function readOneOf<const T extends readonly [string, ...string[]]>(env: Env, name: string, values: T, fallback: T[number], message: string): T[number] {
  return parseSetting(z.union([unset.transform(() => fallback), z.enum(values)]), env[name], message);
}

/** A provider switch (`<ROUTE>_PROVIDER`): one of `names`, case-insensitive, or the default when unset. */
export function readChoice(env: Env, name: string, names: readonly string[], fallback: string): string {
  const raw = env[name]?.trim().toLowerCase() || fallback;
  if (!names.includes(raw)) throw new ConfigError(`${name}="${env[name]}" is not valid: use one of ${names.join(', ')} (default ${fallback}).`);
  return raw;
}

/**
 * `HOOKRUN_SCHEMA`: the PostgreSQL schema hookrun's tables live in (default
 * `hookrun`, as db/schema-name.ts names it). A plain lower-case identifier, so
 * it means the same quoted or not; `public` and `pg_*` are refused (the
 * product's tables, PostgreSQL's own).
 */
export function readSchema(env: Env): string {
  const name = z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/)
    .refine((value) => value !== 'public' && value !== 'information_schema' && !value.startsWith('pg_'));
  return parseSetting(
    z.union([unset.transform(() => 'hookrun'), name]),
    env.HOOKRUN_SCHEMA,
    `HOOKRUN_SCHEMA="${env.HOOKRUN_SCHEMA}" is not valid: use a lower-case name of letters, digits and _ (at most 63, not starting with a digit), other than public, information_schema or pg_…; default hookrun.`,
  );
}

/** An http(s) URL, as a URL. */
export const httpUrl = z.url({ protocol: /^https?$/ }).transform((value) => new URL(value));

/** An http(s) origin (no path), or undefined when unset; anything else names the setting and an example. */
export function readOrigin(env: Env, name: string, example: string, otherwise = 'or unset it'): URL | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const origin = httpUrl.refine((url) => url.pathname === '/' || url.pathname === '');
  return parseSetting(origin, raw, `${name}="${raw}" is not valid: use an origin like ${example} (no path), ${otherwise}.`);
}

/** Whether a URL's host is this machine (127.0.0.0/8, ::1, localhost): the only place credentials may go over plain http. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/** `STRIPE_SECRET_KEY` and `STRIPE_API_BASE`, checked for shape; undefined when no key is set. */
export function readStripe(env: Env): StripeSettings | undefined {
  const secretKey = env.STRIPE_SECRET_KEY?.trim();
  const rawBase = env.STRIPE_API_BASE?.trim();
  if (!secretKey) {
    if (rawBase) throw new ConfigError('STRIPE_API_BASE is set but STRIPE_SECRET_KEY is not: set the key (sk_… or rk_…) or unset STRIPE_API_BASE.');
    return undefined;
  }
  parseSetting(
    z.string().regex(/^(sk|rk)_(test|live)_\S+$/),
    secretKey,
    'STRIPE_SECRET_KEY must be a Stripe secret or restricted key (sk_test_…, sk_live_…, rk_…); copy it from Developers → API keys.',
  );
  const apiBase = readOrigin(env, 'STRIPE_API_BASE', 'http://127.0.0.1:12111', 'or unset it for api.stripe.com');
  if (apiBase?.protocol === 'http:' && !isLoopbackHost(apiBase.hostname)) {
    throw new ConfigError(
      `STRIPE_API_BASE=${apiBase.origin} would send STRIPE_SECRET_KEY unencrypted: use https://, or http:// only to this machine (127.0.0.0/8, ::1, localhost), or unset it for api.stripe.com.`,
    );
  }
  return { secretKey, apiBase };
}

/** Retention in days (`EVENT_RETENTION_DAYS`, …); 0 keeps rows forever. */
export interface RetentionDays {
  events: number;
  dedupeKeys: number;
  cronRuns: number;
  /** The audit of operators' actions (`AUDIT_RETENTION_DAYS`, by default a year: longer than the events it is about); absent keeps it. */
  audit?: number;
}

export function readRetention(env: Env): RetentionDays {
  const days = {
    events: readInt(env, 'EVENT_RETENTION_DAYS', 30, 0, 36_500),
    dedupeKeys: readInt(env, 'DEDUPE_RETENTION_DAYS', 90, 0, 36_500),
    cronRuns: readInt(env, 'CRON_RUN_RETENTION_DAYS', 90, 0, 36_500),
    audit: readInt(env, 'AUDIT_RETENTION_DAYS', 365, 0, 36_500),
  };
  if (days.events > 0 && days.dedupeKeys > 0 && days.dedupeKeys < days.events) {
    throw new ConfigError(
      `DEDUPE_RETENTION_DAYS=${days.dedupeKeys} is shorter than EVENT_RETENTION_DAYS=${days.events}: keys must outlive their events, or a late retry would be stored again. Raise it (default 90) or set it to 0 (keep forever).`,
    );
  }
  return days;
}

/** Where captured changes come from: a PostgreSQL with wal_level=logical, a publication, a slot hookrun owns. */
export interface ChangesSettings {
  /** Holds a password: never log it. */
  databaseUrl: string;
  publication: string;
  slot: string;
  /** Warn (and alert) when the slot holds back more WAL than this. */
  maxRetainedWalBytes: number;
}

/** A PostgreSQL connection URL (DATABASE_URL, CHANGES_DATABASE_URL). */
export const POSTGRES_URL = z.string().regex(/^postgres(ql)?:\/\//);

// Slot names allow [a-z0-9_] up to 63 characters (PostgreSQL's rule); both names are spliced into a replication command.
const SLOT_NAME = /^[a-z0-9_]{1,63}$/;
const PUBLICATION_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** `CHANGES_DATABASE_URL` and its slot, publication and WAL limit, or undefined when unset. */
export function readChanges(env: Env): ChangesSettings | undefined {
  const databaseUrl = env.CHANGES_DATABASE_URL?.trim();
  if (!databaseUrl) return undefined;
  parseSetting(
    POSTGRES_URL,
    databaseUrl,
    'CHANGES_DATABASE_URL must start with postgres:// or postgresql:// (the product database, with wal_level=logical), or be unset.',
  );
  const publication = env.CHANGES_PUBLICATION?.trim() || 'hookrun_changes';
  const slot = env.CHANGES_SLOT?.trim() || 'hookrun_changes';
  parseSetting(
    z.string().regex(PUBLICATION_NAME),
    publication,
    `CHANGES_PUBLICATION="${publication}" is not a plain identifier: use letters, digits and _ (default hookrun_changes).`,
  );
  parseSetting(
    z.string().regex(SLOT_NAME),
    slot,
    `CHANGES_SLOT="${slot}" is not a valid slot name: use lower-case letters, digits and _, up to 63 (default hookrun_changes).`,
  );
  const maxRetainedWalMb = readInt(env, 'CHANGES_MAX_RETAINED_WAL_MB', 1024, 1, 16 * 1024 * 1024);
  return { databaseUrl, publication, slot, maxRetainedWalBytes: maxRetainedWalMb * 1024 * 1024 };
}
