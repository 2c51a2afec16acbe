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

/** Below this, a bearer secret (ADMIN_TOKEN, CRON_SECRET, METRICS_TOKEN, a DATABASE_WEBHOOK_SECRET bearer) could be guessed over the network: refused at start. */
export const MIN_SECRET_CHARS = 32;

function tooShort(name: string, guards: string, unset: string): ConfigError {
  return new ConfigError(
    `${name} is shorter than ${MIN_SECRET_CHARS} characters: anyone who can reach ${guards} could guess it. Use a long random value (openssl rand -hex 32), or ${unset}.`,
  );
}

/** A bearer secret of at least MIN_SECRET_CHARS, or undefined when unset. */
export function readBearer(env: Env, name: string, guards: string, unset: string): string | undefined {
  const token = env[name] || undefined;
  if (token !== undefined && token.length < MIN_SECRET_CHARS) throw tooShort(name, guards, unset);
  return token;
}

/** Every bearer value of the database receiver's secret (a `whsec_` signing key is checked by its own rules). */
export function checkBearerValues(setting: SecretSetting | undefined): void {
  const short = setting?.values.find((value) => !value.startsWith('whsec_') && value.length < MIN_SECRET_CHARS);
  if (setting && short !== undefined) throw tooShort(setting.envName, '/webhooks/database', 'use a whsec_ signing key');
}
