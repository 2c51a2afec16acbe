import type { Env } from './values.js';
import { ConfigError } from '../errors.js';
import type { SecretSetting } from '../webhooks/provider.js';

/** A receiver's secret: the first of `names` that is set, its comma-separated values (several during a rotation). */
export function readSecret(env: Env, names: readonly string[]): SecretSetting | undefined {
  for (const envName of names) {
    const raw = env[envName];
    if (raw === undefined || raw.trim() === '') continue;
    const values = raw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
    return { envName, values };
  }
  return undefined;
}

/** Below this, a bearer secret (ADMIN_TOKEN, METRICS_TOKEN, a DATABASE_WEBHOOK_SECRET bearer) could be guessed over the network: refused at start. */
export const MIN_SECRET_CHARS = 32;

/**
 * CRON_SECRET's minimum: Vercel's own (it refuses a shorter one), so the
 * secret Vercel Cron sends is accepted. It only starts jobs, and wrong bearers
 * are throttled per address (http/auth-failures), so 16 random characters
 * are out of reach of guessing; the admin API's token guards far more.
 */
export const MIN_CRON_SECRET_CHARS = 16;

/** The one length rule of bearer secrets: why `name` is too short and what to do, or undefined when it is long enough. */
function shortSecret(name: string, value: string, minChars: number, guards: string, unset: string): string | undefined {
  if (value.length >= minChars) return undefined;
  return `${name} is shorter than ${minChars} characters: anyone who can reach ${guards} could guess it. Use a long random value (openssl rand -hex 32), or ${unset}.`;
}

/** A bearer secret of at least MIN_SECRET_CHARS, or undefined when unset. */
export function readBearer(env: Env, name: string, guards: string, unset: string): string | undefined {
  const token = env[name] || undefined;
  const short = token === undefined ? undefined : shortSecret(name, token, MIN_SECRET_CHARS, guards, unset);
  if (short !== undefined) throw new ConfigError(short);
  return token;
}

/** Who may run `/cron/<job>` (see readCronAccess). */
export interface CronAccess {
  cronSecret: string | undefined;
  cronLocalCallers: boolean;
  /**
   * Why CRON_SECRET cannot be used (too short), or undefined: then every
   * `/cron` call answers 503 `not_configured` with it, and nothing else stops;
   * a cron secret must not take the webhook routes down with it.
   */
  cronSecretProblem: string | undefined;
}

/**
 * Who may run `/cron/<job>`: the holder of CRON_SECRET; without it nobody,
 * unless the operator states that no proxy is in front (`CRON_LOCAL_CALLERS=allow`).
 * hookrun cannot see a proxy that adds no header (nginx's bare `proxy_pass`):
 * it connects from loopback on behalf of anyone, so loopback alone proves nothing.
 */
export function readCronAccess(env: Env): CronAccess {
  const localCallers = env.CRON_LOCAL_CALLERS?.trim() || 'refuse';
  if (localCallers !== 'allow' && localCallers !== 'refuse') {
    throw new ConfigError(
      `CRON_LOCAL_CALLERS="${env.CRON_LOCAL_CALLERS}" is not valid: use "allow" (no proxy in front: callers on this machine may run /cron jobs without CRON_SECRET) or "refuse" (the default).`,
    );
  }
  const cronLocalCallers = localCallers === 'allow';
  const cronSecret = env.CRON_SECRET || undefined;
  const fix =
    'unset it to keep /cron closed; then restart hookrun (redeploy on Vercel). Until then /cron answers 503 not_configured; the webhook routes are not affected';
  const short = cronSecret === undefined ? undefined : shortSecret('CRON_SECRET', cronSecret, MIN_CRON_SECRET_CHARS, '/cron', fix);
  return short === undefined
    ? { cronSecret, cronLocalCallers, cronSecretProblem: undefined }
    : { cronSecret: undefined, cronLocalCallers, cronSecretProblem: short };
}

/** What `hookrun start` warns and `hookrun check` reports while CRON_SECRET is unset: who can run `/cron/<job>`, and what to set. */
export function cronAccessWarning(config: { cronLocalCallers: boolean }): string {
  if (config.cronLocalCallers)
    return 'CRON_SECRET is not set: /cron/* answers only callers on this machine (CRON_LOCAL_CALLERS=allow, or hookrun dev). Behind a reverse proxy that is anyone: set CRON_SECRET there.';
  return 'CRON_SECRET is not set: /cron/* is closed (403 to every caller). Set CRON_SECRET to call jobs from a scheduler, or CRON_LOCAL_CALLERS=allow when no proxy is in front and only this machine calls them.';
}

/** Every bearer value of the database receiver's secret (a `whsec_` signing key is checked by its own rules). */
export function checkBearerValues(setting: SecretSetting | undefined): void {
  const short = setting?.values.find((value) => !value.startsWith('whsec_') && value.length < MIN_SECRET_CHARS);
  if (setting && short !== undefined)
    throw new ConfigError(shortSecret(setting.envName, short, MIN_SECRET_CHARS, '/webhooks/database', 'use a whsec_ signing key')!);
}
