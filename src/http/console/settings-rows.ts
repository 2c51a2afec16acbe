import type { Config } from '../../config/config.js';
import { ENV_VARIABLES } from '../../config/variables.js';
import { CHOOSABLE_SOURCES, PROVIDERS, SOURCES, choiceEnvName, isChoosable, routeSecretEnvName } from '../../webhooks/providers/index.js';

/** One setting as the Settings page shows it: never a secret's value, only whether it is set. */
export interface SettingRow {
  name: string;
  feature: string;
  /** What is in effect: the value, the default's description, or "set" / "not set" for a secret. */
  value: string;
  /** Where it came from: `env` (the environment or .env), `default`, or `platform.json`. */
  source: 'env' | 'default' | 'platform.json';
  secret: boolean;
}

/** Variables whose value is a credential, beyond the senders' secrets: tokens, keys, and URLs that carry a password or are themselves the secret. */
const SECRET_NAME = /SECRET|TOKEN|_KEY$|PASSWORD|^DATABASE_URL$|^DATABASE_DIRECT_URL$|^CHANGES_DATABASE_URL$|^ALERT_WEBHOOK_URL$|^ALERT_SLACK_WEBHOOK_URL$/;

/** Whether a value would give something away if shown: a URL with a user, a password or a query (a key in `?token=`). */
function holdsCredentials(value: string): boolean {
  try {
    const url = new URL(value);
    return url.username !== '' || url.password !== '' || url.search !== '';
  } catch {
    return false;
  }
}

const unquote = (text: string) => text.replace(/`/g, '');

/** What a few defaults resolve to here (a folder, a port), shown instead of the default's description. */
function resolvedDefaults(config: Config): Record<string, string> {
  return {
    PORT: String(config.port),
    DATA_DIR: config.dataDir,
    HOOKRUN_PROJECT: config.projectDir,
    PLATFORM_CONFIG: config.platformConfigPath,
    HOOKRUN_SCHEMA: config.schema,
    LOG_LEVEL: config.logLevel,
    MAX_INFLIGHT_BODY_BYTES_PER_ADDRESS: String(config.maxInflightBodyBytesPerAddress),
  };
}

/** Every sender's secret names, the routes' own, and the custom senders' and HTTP targets' token variables, with their feature. */
function secretVariables(config: Config): Array<{ name: string; feature: string }> {
  const routes = SOURCES.filter(isChoosable).map((route) => ({ name: routeSecretEnvName(route), feature: `webhooks: ${route}` }));
  const senders = PROVIDERS.flatMap((p) => p.secretEnv.map((name) => ({ name, feature: `webhooks: ${p.route} (${p.name})` })));
  const custom = config.customWebhooks.map((w) => ({ name: w.secretEnv, feature: `webhooks: ${w.route} (platform.json)` }));
  const targets = config.crons.filter((c) => c.tokenEnv).map((c) => ({ name: c.tokenEnv!, feature: `cron: ${c.name ?? c.path ?? ''} (platform.json)` }));
  return [...routes, ...senders, ...custom, ...targets];
}

/**
 * The effective environment settings: each variable hookrun reads, its value
 * from the environment or its default, and every secret reduced to "set" or
 * "not set". A value is shown only when its name is not a secret's and it
 * carries no credentials.
 */
export function environmentRows(config: Config): SettingRow[] {
  const env = config.environment;
  const resolved = resolvedDefaults(config);
  const plain = [
    ...ENV_VARIABLES.map((v) => ({ name: v.name, feature: v.feature, fallback: resolved[v.name] ?? unquote(v.default), secret: false })),
    ...CHOOSABLE_SOURCES.map((route) => ({ name: choiceEnvName(route), feature: `webhooks: ${route}`, fallback: config.providers[route], secret: false })),
  ];
  const secrets = secretVariables(config).map((s) => ({ ...s, fallback: 'not set', secret: true }));
  const seen = new Set<string>();
  return [...plain, ...secrets].flatMap((v) => {
    if (seen.has(v.name)) return [];
    seen.add(v.name);
    const raw = env[v.name]?.trim();
    const set = raw !== undefined && raw !== '';
    const secret = v.secret || SECRET_NAME.test(v.name) || (set && holdsCredentials(raw));
    const value = secret ? (set ? 'set' : 'not set') : set ? raw : v.fallback;
    return [{ name: v.name, feature: v.feature, value, source: set ? ('env' as const) : ('default' as const), secret }];
  });
}

/** A URL as a person may see it: its origin only, so no path or query secret (a Slack-style path, a `?key=`) shows. */
const originOnly = (value: string) => {
  try {
    const url = new URL(value);
    return `${url.protocol}//${url.host}${url.pathname !== '/' || url.search ? '/…' : ''}`;
  } catch {
    return 'set';
  }
};

/** What platform.json set: each cron entry (schedule, zone, target), each custom sender, each built-in handler switch. */
export function platformRows(config: Config): SettingRow[] {
  const row = (name: string, feature: string, value: string, secret = false): SettingRow => ({ name, feature, value, source: 'platform.json', secret });
  const crons = config.crons.map((c) => {
    const target = c.url ? ` → ${c.method ?? 'GET'} ${originOnly(c.url)}${c.tokenEnv ? ` with ${c.tokenEnv} (${c.token ? 'set' : 'not set'})` : ''}` : '';
    return row(`crons: ${c.path ?? c.name ?? '?'}`, 'cron', `${c.schedule}${c.timezone ? ` (${c.timezone})` : ''}${target}`);
  });
  const webhooks = config.customWebhooks.map((w) =>
    row(`webhooks: /webhooks/${w.route}`, 'webhooks', `${w.header} (${w.algorithm}); secret ${w.secretEnv} ${w.secret ? 'set' : 'not set'}`),
  );
  const builtIn = Object.entries(config.builtInHandlers).map(([name, on]) => row(`builtInHandlers: ${name}`, 'handlers', on ? 'on' : 'off'));
  return [...crons, ...webhooks, ...builtIn];
}
