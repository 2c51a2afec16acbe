import { readFileSync } from 'node:fs';
import { ConfigError } from './errors.js';

/**
 * One entry of platform.json `crons`, as written (validated by cron/schedule.ts):
 * Vercel's `{ path, schedule }` for a job file, or `{ name, url, schedule }` for
 * a job in any runtime that answers HTTP; both may add a time zone and a time-out.
 */
export interface CronEntry {
  /** `/cron/<job>`: the job file `jobs/<job>.ts` of the project (or a shipped job). */
  path?: string;
  /** An HTTP target's job name (its route `/cron/<name>` and its history). */
  name?: string;
  /** An HTTP target: called on each tick, with `Authorization: Bearer <the tokenEnv value>` when it names one. */
  url?: string;
  /** An HTTP target's own token: the env variable whose value is its bearer (never hookrun's CRON_SECRET). */
  tokenEnv?: string;
  /** That variable's value, read at start-up; undefined when unset (the runs then fail, saying so). */
  token?: string;
  /** Call a plain `http://` URL on another machine (the token crosses the network unencrypted); default false. */
  allowHttp?: boolean;
  /** An HTTP target's method (default GET, as Vercel calls). */
  method?: 'GET' | 'POST';
  schedule: string;
  /** IANA zone the expression is read in (default: the job file's, else UTC). */
  timezone?: string;
  /** An HTTP target's time limit in ms (a job file sets its own). */
  timeoutMs?: number;
  /** An HTTP target's policies, as a job file writes them (`defineJob` checks them). */
  policy?: Record<string, unknown>;
}

/** Fields an HTTP target may carry that a job file sets in `defineJob`. */
const POLICY_KEYS = ['retries', 'catchUp', 'catchUpWindow', 'catchUpMax', 'overlap'];

const ENTRY_KEYS = new Set(['path', 'name', 'url', 'method', 'tokenEnv', 'allowHttp', 'schedule', 'timezone', 'timeoutMs', ...POLICY_KEYS]);

/** hookrun's own credentials: a target never gets them as its token. */
const OWN_CREDENTIALS = new Set(['CRON_SECRET', 'ADMIN_TOKEN']);

/** An HTTP target's `tokenEnv` and `allowHttp`, checked, with the token read from `env`. */
function readTargetAuth(raw: Record<string, unknown>, isTarget: boolean, where: string, env: Record<string, string | undefined>): Pick<CronEntry, 'tokenEnv' | 'token' | 'allowHttp'> {
  const { tokenEnv, allowHttp } = raw;
  if (tokenEnv !== undefined) {
    if (!isTarget || typeof tokenEnv !== 'string' || !ENV_NAME.test(tokenEnv)) throw new ConfigError(`${where}.tokenEnv: only an HTTP target has one: the name of the env variable holding its token, like "BILLING_CRON_TOKEN".`);
    if (OWN_CREDENTIALS.has(tokenEnv)) throw new ConfigError(`${where}.tokenEnv: "${tokenEnv}" is hookrun's own credential; give the target a token of its own, like "BILLING_CRON_TOKEN".`);
  }
  if (allowHttp !== undefined && (!isTarget || typeof allowHttp !== 'boolean')) throw new ConfigError(`${where}.allowHttp: only an HTTP target has one, true or false (default false: https:// unless on this machine).`);
  const token = tokenEnv === undefined ? undefined : env[tokenEnv as string]?.trim() || undefined;
  return { tokenEnv: tokenEnv as string | undefined, token, allowHttp: allowHttp as boolean | undefined };
}

function readEntry(entry: unknown, where: string, env: Record<string, string | undefined>): CronEntry {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new ConfigError(`${where}: must be an object with "path" and "schedule" (or "name", "url" and "schedule").`);
  const raw = entry as Record<string, unknown>;
  const unknownKey = Object.keys(raw).find((k) => !ENTRY_KEYS.has(k));
  if (unknownKey) throw new ConfigError(`${where}.${unknownKey}: not a cron entry field (use ${[...ENTRY_KEYS].join(', ')}).`);
  const text = (key: string, example: string): string | undefined => {
    const value = raw[key];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value.trim() === '') throw new ConfigError(`${where}.${key}: must be a non-empty string like ${example}.`);
    return value;
  };
  const schedule = text('schedule', '"0 1 * * *"');
  if (schedule === undefined) throw new ConfigError(`${where}.schedule: must be a cron expression string like "0 1 * * *".`);
  const path = text('path', '"/cron/keep-alive"');
  const name = text('name', '"billing-sync"');
  const url = text('url', '"https://billing.internal/cron/sync"');
  if (path === undefined && url === undefined) throw new ConfigError(`${where}.path: must be a string like "/cron/keep-alive" (or give "name" and "url" for an HTTP target).`);
  if (path !== undefined && (url !== undefined || name !== undefined)) throw new ConfigError(`${where}: has "path" and "${url !== undefined ? 'url' : 'name'}"; a job is either a file ("path") or an HTTP target ("name" and "url").`);
  if (url !== undefined && name === undefined) throw new ConfigError(`${where}.name: an HTTP target needs a name for its route and history, like "billing-sync".`);
  const method = text('method', '"POST"')?.toUpperCase();
  if (method !== undefined && (url === undefined || (method !== 'GET' && method !== 'POST'))) throw new ConfigError(`${where}.method: only an HTTP target has one, and it is "GET" (default) or "POST".`);
  const timeoutMs = raw.timeoutMs;
  if (timeoutMs !== undefined && (url === undefined || !Number.isInteger(timeoutMs) || (timeoutMs as number) < 1 || (timeoutMs as number) > 86_400_000)) {
    throw new ConfigError(`${where}.timeoutMs: only an HTTP target has one (a job file sets its own), a whole number of ms from 1 to 86400000.`);
  }
  const policyKeys = POLICY_KEYS.filter((k) => raw[k] !== undefined);
  if (policyKeys.length > 0 && url === undefined) throw new ConfigError(`${where}.${policyKeys[0]}: a job file sets its policies in defineJob; only an HTTP target ("url") sets them here.`);
  const policy = policyKeys.length > 0 ? Object.fromEntries(policyKeys.map((k) => [k, raw[k]])) : undefined;
  return { path, name, url, method: method as CronEntry['method'], ...readTargetAuth(raw, url !== undefined, where, env), schedule, timezone: text('timezone', '"Europe/Berlin"'), timeoutMs: timeoutMs as number | undefined, policy };
}

function readPlatformFile(path: string): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(`${path}: cannot be read (${(error as Error).message}).`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${path}: is not valid JSON (${(error as Error).message}). Fix the file or point PLATFORM_CONFIG at another.`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`${path}: must be a JSON object like { "crons": [ { "path": "/cron/keep-alive", "schedule": "0 1 * * *" } ] }.`);
  }
  const unknownKey = Object.keys(parsed).find((key) => !TOP_LEVEL_KEYS.includes(key));
  if (unknownKey !== undefined) {
    const near = nearestKey(unknownKey, TOP_LEVEL_KEYS.slice(1));
    throw new ConfigError(`${path}: "${unknownKey}" is not a platform.json key${near ? `; did you mean "${near}"?` : ''} It holds only ${TOP_LEVEL_KEYS.slice(1).map((k) => `"${k}"`).join(' and ')} (and "$schema").`);
  }
  return parsed as Record<string, unknown>;
}

/** What platform.json may hold at its top: anything else (a typo like "cron") stops start-up instead of being ignored. */
const TOP_LEVEL_KEYS = ['$schema', 'crons', 'webhooks', 'builtInHandlers'];

/** The known key within 3 edits of `key` (case ignored), nearest first; undefined when none is that close. */
function nearestKey(key: string, known: readonly string[]): string | undefined {
  const distance = (a: string, b: string): number => {
    let row = Array.from({ length: b.length + 1 }, (_, i) => i);
    for (let i = 1; i <= a.length; i++) {
      const next = [i];
      for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      row = next;
    }
    return row[b.length]!;
  };
  const scored = known.map((k) => [k, distance(key.toLowerCase(), k)] as const).filter(([, d]) => d <= 3).sort((x, y) => x[1] - y[1]);
  return scored[0]?.[0];
}

/** Parse the `crons` array of platform.json (HTTP targets' tokens read from `env`); shape only, the cron module checks jobs, URLs and expressions. */
export function readPlatformConfig(path: string, env: Record<string, string | undefined> = {}): CronEntry[] {
  const crons = readPlatformFile(path)?.crons;
  if (crons === undefined) return [];
  if (!Array.isArray(crons)) throw new ConfigError(`${path} crons: must be an array of { "path", "schedule" } entries.`);
  return crons.map((entry: unknown, index) => readEntry(entry, `${path} crons[${index}]`, env));
}

/**
 * One entry of platform.json `webhooks`: a sender hookrun does not ship,
 * verified by an HMAC of the body (or of `<timestamp>.<body>`) in a header.
 */
export interface WebhookSchemeEntry {
  /** `/webhooks/<route>`, also the events' source. */
  route: string;
  /** The env variable holding the secret (a comma-separated list rotates). */
  secretEnv: string;
  algorithm: 'sha1' | 'sha256' | 'sha512';
  /** The header carrying the signature. */
  header: string;
  encoding: 'hex' | 'base64';
  /** Text before the digest in the header (`sha256=`); default none. */
  prefix: string;
  /** A header with the signing time in unix seconds; then `<timestamp>.<body>` is signed. */
  timestampHeader: string | undefined;
  toleranceSeconds: number;
  /** Dotted JSON paths of the idempotency key and the event type in the body. */
  keyPath: string;
  typePath: string;
}

const ROUTE = /^[a-z][a-z0-9-]{0,31}$/;
const ENV_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;
const HEADER = /^[A-Za-z0-9-]{1,64}$/;
const JSON_PATH = /^[A-Za-z0-9_]{1,64}(\.[A-Za-z0-9_]{1,64}){0,7}$/;

function readScheme(entry: unknown, where: string): WebhookSchemeEntry {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new ConfigError(`${where}: must be an object like { "route": "acme", "secretEnv": "ACME_WEBHOOK_SECRET", "header": "X-Acme-Signature", "keyPath": "id", "typePath": "type" }.`);
  const e = entry as Record<string, unknown>;
  const text = (field: string, pattern: RegExp, example: string, fallback?: string): string => {
    const value = e[field] ?? fallback;
    if (typeof value !== 'string' || !pattern.test(value)) throw new ConfigError(`${where}.${field}: must be ${example}.`);
    return value;
  };
  const oneOf = <T extends string>(field: string, values: readonly T[], fallback: T): T => {
    const value = e[field] ?? fallback;
    if (!values.includes(value as T)) throw new ConfigError(`${where}.${field}: must be one of ${values.join(', ')} (default ${fallback}).`);
    return value as T;
  };
  const tolerance = e.toleranceSeconds ?? 300;
  if (typeof tolerance !== 'number' || !Number.isInteger(tolerance) || tolerance < 1 || tolerance > 86_400) throw new ConfigError(`${where}.toleranceSeconds: must be a whole number of seconds from 1 to 86400 (default 300).`);
  const prefix = e.prefix ?? '';
  if (typeof prefix !== 'string' || prefix.length > 32) throw new ConfigError(`${where}.prefix: must be a string of at most 32 characters, like "sha256=".`);
  return {
    route: text('route', ROUTE, 'lower-case letters, digits and -, like "acme"'),
    secretEnv: text('secretEnv', ENV_NAME, 'an env variable name like "ACME_WEBHOOK_SECRET"'),
    algorithm: oneOf('algorithm', ['sha1', 'sha256', 'sha512'] as const, 'sha256'),
    header: text('header', HEADER, 'a header name like "X-Acme-Signature"'),
    encoding: oneOf('encoding', ['hex', 'base64'] as const, 'hex'),
    prefix,
    timestampHeader: e.timestampHeader === undefined ? undefined : text('timestampHeader', HEADER, 'a header name like "X-Acme-Timestamp"'),
    toleranceSeconds: tolerance,
    keyPath: text('keyPath', JSON_PATH, 'a dotted JSON path like "id" or "event.id"'),
    typePath: text('typePath', JSON_PATH, 'a dotted JSON path like "type"'),
  };
}

/** Parse the `webhooks` array of platform.json: custom senders, validated at start-up like the crons. */
export function readWebhookSchemes(path: string): WebhookSchemeEntry[] {
  const webhooks = readPlatformFile(path)?.webhooks;
  if (webhooks === undefined) return [];
  if (!Array.isArray(webhooks)) throw new ConfigError(`${path} webhooks: must be an array of { "route", "secretEnv", "header", … } entries.`);
  const schemes = webhooks.map((entry: unknown, index) => readScheme(entry, `${path} webhooks[${index}]`));
  const seen = new Set<string>();
  for (const [index, scheme] of schemes.entries()) {
    if (seen.has(scheme.route)) throw new ConfigError(`${path} webhooks[${index}].route: "${scheme.route}" is already used by another entry.`);
    seen.add(scheme.route);
  }
  return schemes;
}

/**
 * platform.json `builtInHandlers`: the shipped handlers (the mirrors) turned
 * on or off by name, e.g. `{ "stripe-mirror": false }`. Absent: all on.
 */
export function readBuiltInHandlerSwitches(path: string): Record<string, boolean> {
  const switches = readPlatformFile(path)?.builtInHandlers;
  if (switches === undefined) return {};
  if (typeof switches !== 'object' || switches === null || Array.isArray(switches) || Object.values(switches).some((v) => typeof v !== 'boolean')) {
    throw new ConfigError(`${path} builtInHandlers: must be an object of handler names to true or false, e.g. { "stripe-mirror": false }.`);
  }
  return switches as Record<string, boolean>;
}
