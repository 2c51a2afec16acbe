import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { nearestKey } from '../nearest-key.js';
import type { CronEntry, WebhookSchemeEntry } from './platform-entries.js';

/** Fields an HTTP target may carry that a job file sets in `defineJob`. */
const POLICY_KEYS = ['retries', 'catchUp', 'catchUpWindow', 'catchUpMax', 'overlap'] as const;

/** An HTTP target's limits across instances, checked with the target (cron/http-target.ts). */
const LIMIT_KEYS = ['concurrency', 'rateLimit'] as const;

const ENTRY_KEYS = ['path', 'name', 'url', 'method', 'tokenEnv', 'allowHttp', 'schedule', 'timezone', 'timeoutMs', ...POLICY_KEYS, ...LIMIT_KEYS];

/** hookrun's own credentials: a target never gets them as its token. */
const OWN_CREDENTIALS = new Set(['CRON_SECRET', 'ADMIN_TOKEN', 'ADMIN_TOKENS', 'HOOKRUN_ADMIN_TOKEN']);

const ROUTE = /^[a-z][a-z0-9-]{0,31}$/;
const ENV_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;
const HEADER = /^[A-Za-z0-9-]{1,64}$/;
const JSON_PATH = /^[A-Za-z0-9_]{1,64}(\.[A-Za-z0-9_]{1,64}){0,7}$/;

/** A non-empty string field; its message shows an example. */
const text = (example: string) => {
  const error = `must be a non-empty string like ${example}.`;
  return z.string({ error }).refine((value) => value.trim() !== '', { error });
};

const TIMEOUT_MS = 'only an HTTP target has one (a job file sets its own), a whole number of ms from 1 to 86400000.';
const TARGET_ONLY_TOKEN = 'only an HTTP target has one: the name of the env variable holding its token, like "BILLING_CRON_TOKEN".';

/** One `crons` entry as written: each field's type here, how they combine in the check below. */
const cronEntrySchema = z
  .strictObject(
    {
      path: text('"/cron/keep-alive"').optional(),
      name: text('"billing-sync"').optional(),
      url: text('"https://billing.internal/cron/sync"').optional(),
      method: text('"POST"').optional(),
      tokenEnv: z.string({ error: TARGET_ONLY_TOKEN }).regex(ENV_NAME, { error: TARGET_ONLY_TOKEN }).optional(),
      allowHttp: z.boolean({ error: 'only an HTTP target has one, true or false (default false: https:// unless on this machine).' }).optional(),
      schedule: z
        .string({ error: 'must be a cron expression string like "0 1 * * *".' })
        .refine((value) => value.trim() !== '', { error: 'must be a non-empty string like "0 1 * * *".' }),
      timezone: text('"Europe/Berlin"').optional(),
      timeoutMs: z.int({ error: TIMEOUT_MS }).min(1, { error: TIMEOUT_MS }).max(86_400_000, { error: TIMEOUT_MS }).optional(),
      // Checked by cron/job.ts's resolveJob, as a job file's are.
      retries: z.unknown().optional(),
      catchUp: z.unknown().optional(),
      catchUpWindow: z.unknown().optional(),
      catchUpMax: z.unknown().optional(),
      overlap: z.unknown().optional(),
      // Checked with the target, which names it in the message.
      concurrency: z.unknown().optional(),
      rateLimit: z.unknown().optional(),
    },
    {
      error: (issue) =>
        issue.code === 'invalid_type'
          ? 'must be an object with "path" and "schedule" (or "name", "url" and "schedule").'
          : issue.code === 'unrecognized_keys'
            ? `not a cron entry field (use ${ENTRY_KEYS.join(', ')}).`
            : undefined,
    },
  )
  .superRefine((entry, ctx) => {
    const fail = (field: string | undefined, message: string) => void ctx.addIssue({ code: 'custom', path: field ? [field] : [], message });
    const { path, name, url, tokenEnv } = entry;
    const isTarget = url !== undefined;
    const policyKey = POLICY_KEYS.find((key) => entry[key] !== undefined);
    const limitKey = LIMIT_KEYS.find((key) => entry[key] !== undefined);
    if (path === undefined && url === undefined) fail('path', 'must be a string like "/cron/keep-alive" (or give "name" and "url" for an HTTP target).');
    else if (path !== undefined && (url !== undefined || name !== undefined))
      fail(undefined, `has "path" and "${url !== undefined ? 'url' : 'name'}"; a job is either a file ("path") or an HTTP target ("name" and "url").`);
    else if (isTarget && name === undefined) fail('name', 'an HTTP target needs a name for its route and history, like "billing-sync".');
    else if (entry.method !== undefined && (!isTarget || !['GET', 'POST'].includes(entry.method.toUpperCase())))
      fail('method', 'only an HTTP target has one, and it is "GET" (default) or "POST".');
    else if (entry.timeoutMs !== undefined && !isTarget) fail('timeoutMs', TIMEOUT_MS);
    else if (policyKey !== undefined && !isTarget) fail(policyKey, 'a job file sets its policies in defineJob; only an HTTP target ("url") sets them here.');
    else if (limitKey !== undefined && !isTarget)
      fail(limitKey, 'only an HTTP target ("name" and "url") has one: at most so many calls of it at once (concurrency) or per period (rateLimit).');
    else if (tokenEnv !== undefined && !isTarget) fail('tokenEnv', TARGET_ONLY_TOKEN);
    else if (tokenEnv !== undefined && OWN_CREDENTIALS.has(tokenEnv))
      fail('tokenEnv', `"${tokenEnv}" is hookrun's own credential; give the target a token of its own, like "BILLING_CRON_TOKEN".`);
    else if (entry.allowHttp !== undefined && !isTarget)
      fail('allowHttp', 'only an HTTP target has one, true or false (default false: https:// unless on this machine).');
  });

const schemeField = (pattern: RegExp, example: string) => z.string({ error: `must be ${example}.` }).regex(pattern, { error: `must be ${example}.` });
const oneOf = <const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) =>
  z.enum(values, { error: `must be one of ${values.join(', ')} (default ${fallback}).` }).default(fallback);
const TOLERANCE = 'must be a whole number of seconds from 1 to 86400 (default 300).';

/** One `webhooks` entry: a custom sender, with the defaults filled in. */
const webhookSchemeSchema = z.object(
  {
    route: schemeField(ROUTE, 'lower-case letters, digits and -, like "acme"'),
    secretEnv: schemeField(ENV_NAME, 'an env variable name like "ACME_WEBHOOK_SECRET"'),
    algorithm: oneOf(['sha1', 'sha256', 'sha512'] as const, 'sha256'),
    header: schemeField(HEADER, 'a header name like "X-Acme-Signature"'),
    encoding: oneOf(['hex', 'base64'] as const, 'hex'),
    prefix: z
      .string({ error: 'must be a string of at most 32 characters, like "sha256=".' })
      .max(32, { error: 'must be a string of at most 32 characters, like "sha256=".' })
      .default(''),
    timestampHeader: schemeField(HEADER, 'a header name like "X-Acme-Timestamp"').optional(),
    toleranceSeconds: z.int({ error: TOLERANCE }).min(1, { error: TOLERANCE }).max(86_400, { error: TOLERANCE }).default(300),
    keyPath: schemeField(JSON_PATH, 'a dotted JSON path like "id" or "event.id"'),
    typePath: schemeField(JSON_PATH, 'a dotted JSON path like "type"'),
  },
  {
    error: (issue) =>
      issue.code === 'invalid_type'
        ? 'must be an object like { "route": "acme", "secretEnv": "ACME_WEBHOOK_SECRET", "header": "X-Acme-Signature", "keyPath": "id", "typePath": "type" }.'
        : undefined,
  },
);

const SWITCHES = 'must be an object of handler names to true or false, e.g. { "stripe-mirror": false }.';

/** What platform.json may hold at its top, with what each does (docs/configuration.md): anything else (a typo like "cron") stops start-up instead of being ignored. */
export const PLATFORM_JSON_KEYS: Readonly<Record<string, string>> = {
  $schema: 'ignored: a JSON schema URL for editors',
  crons: `the schedule, as Vercel writes it: \`{ "path": "/cron/<job>", "schedule" }\` for a job file, or \`{ "name", "url", "schedule" }\` for an HTTP target; fields: ${ENTRY_KEYS.join(', ')}`,
  webhooks:
    'custom senders: `{ "route", "secretEnv", "header", "keyPath", "typePath" }` and optionally `algorithm`, `encoding`, `prefix`, `timestampHeader`, `toleranceSeconds`; an HMAC of the body in a header',
  builtInHandlers: 'the shipped handlers (the mirrors) turned on or off by name, e.g. `{ "stripe-mirror": false }`; absent: all on',
};
const TOP_LEVEL_KEYS = Object.keys(PLATFORM_JSON_KEYS);

const platformFileSchema = z
  .record(z.string(), z.unknown(), { error: 'must be a JSON object like { "crons": [ { "path": "/cron/keep-alive", "schedule": "0 1 * * *" } ] }.' })
  .superRefine((file, ctx) => {
    const unknownKey = Object.keys(file).find((key) => !TOP_LEVEL_KEYS.includes(key));
    if (unknownKey === undefined) return;
    const near = nearestKey(unknownKey, TOP_LEVEL_KEYS.slice(1));
    ctx.addIssue({
      code: 'custom',
      message: `"${unknownKey}" is not a platform.json key${near ? `; did you mean "${near}"?` : ''} It holds only ${TOP_LEVEL_KEYS.slice(1)
        .map((k) => `"${k}"`)
        .join(' and ')} (and "$schema").`,
    });
  })
  .pipe(
    z.object({
      $schema: z.unknown().optional(),
      crons: z.array(cronEntrySchema, { error: 'must be an array of { "path", "schedule" } entries.' }).default([]),
      webhooks: z
        .array(webhookSchemeSchema, { error: 'must be an array of { "route", "secretEnv", "header", … } entries.' })
        .default([])
        .superRefine((schemes, ctx) => {
          const index = schemes.findIndex((scheme, i) => schemes.findIndex((other) => other.route === scheme.route) < i);
          if (index >= 0) ctx.addIssue({ code: 'custom', path: [index, 'route'], message: `"${schemes[index]!.route}" is already used by another entry.` });
        }),
      builtInHandlers: z.record(z.string(), z.boolean({ error: SWITCHES }), { error: SWITCHES }).default({}),
    }),
  );

/** platform.json as validated: every section present (empty when absent). */
type PlatformFile = z.output<typeof platformFileSchema>;

/** `crons[0].schedule`: where an issue is, as the messages name it. */
function formatPath(path: readonly PropertyKey[]): string {
  return path.map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i === 0 ? '' : '.'}${String(part)}`)).join('');
}

function readPlatformFile(path: string): PlatformFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return platformFileSchema.parse({});
    throw new ConfigError(`${path}: cannot be read (${(error as Error).message}).`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${path}: is not valid JSON (${(error as Error).message}). Fix the file or point PLATFORM_CONFIG at another.`);
  }
  const result = platformFileSchema.safeParse(parsed);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  // An unknown field is named in the path (`crons[0].cron`), as the other fields are.
  const where = formatPath(issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path);
  throw new ConfigError(`${path}${where ? ` ${where}` : ''}: ${issue.message}`);
}

/** Parse the `crons` array of platform.json (HTTP targets' tokens read from `env`); shape only, the cron module checks jobs, URLs and expressions. */
export function readPlatformConfig(path: string, env: Record<string, string | undefined> = {}): CronEntry[] {
  return readPlatformFile(path).crons.map(({ method: written, tokenEnv, ...entry }) => {
    const method = written?.toUpperCase();
    const policy = Object.fromEntries(POLICY_KEYS.filter((key) => entry[key] !== undefined).map((key) => [key, entry[key]]));
    for (const key of POLICY_KEYS) delete entry[key];
    return {
      ...entry,
      method: method === 'GET' || method === 'POST' ? method : undefined,
      tokenEnv,
      token: tokenEnv === undefined ? undefined : env[tokenEnv]?.trim() || undefined,
      policy: Object.keys(policy).length > 0 ? policy : undefined,
    };
  });
}

/** Parse the `webhooks` array of platform.json: custom senders, validated at start-up like the crons. */
export function readWebhookSchemes(path: string): WebhookSchemeEntry[] {
  return readPlatformFile(path).webhooks.map((scheme) => ({ ...scheme, timestampHeader: scheme.timestampHeader }));
}

/**
 * platform.json `builtInHandlers`: the shipped handlers (the mirrors) turned
 * on or off by name, e.g. `{ "stripe-mirror": false }`. Absent: all on.
 */
export function readBuiltInHandlerSwitches(path: string): Record<string, boolean> {
  return readPlatformFile(path).builtInHandlers;
}
