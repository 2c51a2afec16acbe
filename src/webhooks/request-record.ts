import type { KeptRequest } from '../db/event-writer.js';
import type { ProviderDefinition } from './provider.js';

/** Headers that carry a credential whatever their sender: never kept in clear. */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie']);

/** The signature headers of the shipped providers (most also match SECRET_PART; listed so a rename cannot unmask one). */
export const PROVIDER_SIGNATURE_HEADERS: readonly string[] = [
  'stripe-signature',
  'svix-signature',
  'webhook-signature',
  'x-hub-signature',
  'x-hub-signature-256',
  'x-shopify-hmac-sha256',
  'x-twilio-signature',
  'paddle-signature',
  'workos-signature',
  'x-signature',
];

/**
 * A header whose name says it may carry a credential (`x-auth-key`,
 * `x-vercel-protection-bypass`, `cf-access-jwt-assertion`, `x-session-id`):
 * matched by part, so a sender's or a proxy's own name is masked too.
 */
const SECRET_PART = /auth|token|secret|key|password|passwd|session|credential|bypass|jwt|signature|cookie|hmac/;

/** Whether a header's value is replaced by a mask when kept (`provider` adds its own credential headers, e.g. a platform.json sender's). */
export function isSecretHeader(name: string, provider?: Pick<ProviderDefinition, 'credentialHeaders'>): boolean {
  return (
    SECRET_HEADERS.has(name) || PROVIDER_SIGNATURE_HEADERS.includes(name) || SECRET_PART.test(name) || (provider?.credentialHeaders.includes(name) ?? false)
  );
}

/** What a masked value shows: its length, no part of it. */
export const maskValue = (value: string): string => `[masked, ${value.length} chars]`;

/** HTTP's whitespace around a header value, which `Headers` strips. */
const VALUE_PADDING = /^[\t\n\r ]+|[\t\n\r ]+$/g;
const isPadding = (code: number): boolean => code === 32 || code === 9 || code === 10 || code === 13;
const padded = (value: string): boolean => isPadding(value.charCodeAt(0)) || isPadding(value.charCodeAt(value.length - 1));

/**
 * Node's raw header list (name, value, name, value, …) as `Headers` would
 * list it: names lowercase and sorted, a repeated header joined with ", "
 * (a cookie with "; "), a repeated set-cookie the last one, values trimmed.
 */
export function entriesOfRaw(raw: readonly string[]): Array<[string, string]> {
  const joined = new Map<string, string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (name.startsWith(':')) continue; // HTTP/2's pseudo-headers
    const sent = raw[i + 1]!;
    const value = padded(sent) ? sent.replace(VALUE_PADDING, '') : sent; // Node's parser has trimmed it already, as a rule
    const before = joined.get(name);
    joined.set(name, before === undefined || name === 'set-cookie' ? value : `${before}${name === 'cookie' ? '; ' : ', '}${value}`);
  }
  return [...joined].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Header name (lowercase) → value, the secret ones masked: what is kept and
 * shown. `raw`, Node's list of the headers that came in, is read when there
 * is one: listing @hono/node-server's lazy `Headers` builds a whole `Headers`
 * first, each header validated (a few per cent of hookrun's CPU per
 * delivery). Both give the same record.
 */
export function maskedHeaders(headers: Headers, provider?: Pick<ProviderDefinition, 'credentialHeaders'>, raw?: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of raw ? entriesOfRaw(raw) : headers) out[name] = isSecretHeader(name, provider) ? maskValue(value) : value;
  return out;
}

/** The scheme a signature value names (`v1`, `h1`, `sha256`), when it names one. */
function schemeOf(value: string): string | undefined {
  return /(?:^|[\s,;])(v1|h1)[=,]/.exec(value)?.[1] ?? /^(sha1|sha256|sha512)=/.exec(value)?.[1];
}

/** The signing time a delivery carries (unix seconds), from a `*-timestamp` header or the signature header's `t=`/`ts=`. */
function signedAt(provider: ProviderDefinition, headers: Headers, signature: string | null): number | undefined {
  const stamped = provider.openapi.headers.find((h) => /timestamp/i.test(h.name) && headers.has(h.name));
  const raw =
    (stamped && headers.get(stamped.name)) ??
    headers.get('svix-timestamp') ??
    headers.get('webhook-timestamp') ??
    (signature ? /(?:^|[\s,;])(?:t|ts)=(\d{1,14})/.exec(signature)?.[1] : undefined);
  if (!raw || !/^\d{1,14}$/.test(raw)) return undefined;
  const n = Number(raw);
  return n > 1e11 ? n / 1000 : n; // WorkOS signs milliseconds
}

/** "signed 3 s before receipt" (or after: a sender's clock ahead of ours). */
function age(seconds: number): string {
  const whole = Math.round(Math.abs(seconds));
  return seconds >= 0 ? `signed ${whole} s before receipt` : `signed ${whole} s after receipt (the sender's clock is ahead)`;
}

/**
 * One line saying what verified a delivery: `stripe: Stripe-Signature v1
 * matched, signed 3 s before receipt`. Read from the headers the verifier
 * accepted; called only after it accepted them.
 */
export function describeVerification(provider: ProviderDefinition, headers: Headers, nowMs: number): string {
  const name = provider.credentialHeaders.find((h) => h !== 'authorization' && headers.has(h)) ?? provider.credentialHeaders.find((h) => headers.has(h));
  if (!name) return `${provider.name}: verified`;
  const value = headers.get(name) ?? '';
  const shown = provider.openapi.headers.find((h) => h.name.toLowerCase() === name)?.name ?? name;
  if (name === 'authorization') return `${provider.name}: Authorization bearer matched, no signed timestamp`;
  const scheme = schemeOf(value);
  const at = signedAt(provider, headers, value);
  const when = at === undefined ? 'no signed timestamp (a repeat is stopped by its key)' : age(nowMs / 1000 - at);
  return `${provider.name}: ${shown}${scheme ? ` ${scheme}` : ''} matched, ${when}`;
}

/**
 * The request a verified delivery came in, as kept beside its event. A JSON
 * body is the payload text itself (passed once to the database, `body`
 * undefined); a form body (Twilio) is kept as its own text. `rawHeaders`:
 * Node's list of the headers, when the request came through Node's server.
 */
export function keptRequest(provider: ProviderDefinition, headers: Headers, body: Uint8Array, nowMs: number, rawHeaders?: readonly string[]): KeptRequest {
  return {
    headersJson: JSON.stringify(maskedHeaders(headers, provider, rawHeaders)),
    body: provider.body === 'json' ? undefined : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'),
    verification: describeVerification(provider, headers, nowMs),
  };
}
