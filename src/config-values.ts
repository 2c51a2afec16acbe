import { ConfigError } from './errors.js';

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

/** A whole-number setting within bounds, or the default when unset. */
export function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name}="${raw}" is not valid: use a whole number from ${min} to ${max} (default ${fallback}).`);
  }
  return value;
}

/** An `on`/`off` setting, or the default when unset. */
export function readOnOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'on' || raw === 'off') return raw === 'on';
  throw new ConfigError(`${name}="${raw}" is not valid: use "on" or "off" (default ${fallback ? 'on' : 'off'}).`);
}

/** An http(s) origin (no path), or undefined when unset; anything else names the setting and an example. */
export function readOrigin(env: Env, name: string, example: string, otherwise = 'or unset it'): URL | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol) || (url.pathname !== '/' && url.pathname !== '')) {
    throw new ConfigError(`${name}="${raw}" is not valid: use an origin like ${example} (no path), ${otherwise}.`);
  }
  return url;
}

/** `STRIPE_SECRET_KEY` and `STRIPE_API_BASE`, checked for shape; undefined when no key is set. */
export function readStripe(env: Env): StripeSettings | undefined {
  const secretKey = env.STRIPE_SECRET_KEY?.trim();
  const rawBase = env.STRIPE_API_BASE?.trim();
  if (!secretKey) {
    if (rawBase) throw new ConfigError('STRIPE_API_BASE is set but STRIPE_SECRET_KEY is not: set the key (sk_… or rk_…) or unset STRIPE_API_BASE.');
    return undefined;
  }
  if (!/^(sk|rk)_(test|live)_\S+$/.test(secretKey)) {
    throw new ConfigError('STRIPE_SECRET_KEY must be a Stripe secret or restricted key (sk_test_…, sk_live_…, rk_…); copy it from Developers → API keys.');
  }
  const apiBase = readOrigin(env, 'STRIPE_API_BASE', 'http://127.0.0.1:12111', 'or unset it for api.stripe.com');
  return { secretKey, apiBase };
}
