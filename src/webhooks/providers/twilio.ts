import { createHash, randomBytes } from 'node:crypto';
import { AppError } from '../../errors.js';
import type { Verifier } from '../delivery.js';
import { defineProvider, type VerifierContext } from '../provider.js';
import { hmac, matchesAnySecret } from './hmac.js';

/** The answer to a delivery without the signature header: from the verifier, and before the body is read. */
const MISSING_SIGNATURE = 'Missing X-Twilio-Signature header: send the request exactly as Twilio signs it.';

type Params = Record<string, string | string[]>;

const utf8 = new TextDecoder('utf-8', { fatal: true });
const BASE64_SHA1 = /^[A-Za-z0-9+/]{27}=$/;
const STATUS = /^[a-z-]{1,32}$/;

/** The form body as an object; a repeated name keeps every value, in order. */
function readForm(body: Uint8Array): Params {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new AppError('invalid_payload', 'The form body is not valid UTF-8.');
  }
  const params: Params = Object.create(null);
  for (const [name, value] of new URLSearchParams(text)) {
    const seen = params[name];
    params[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return params;
}

/** What Twilio signs: the URL, then each parameter name + value in name order (a repeated name: its distinct values sorted). */
function signedData(url: string, params: Params): string {
  let data = url;
  for (const name of Object.keys(params).sort()) {
    const value = params[name]!;
    for (const v of Array.isArray(value) ? [...new Set(value)].sort() : [value]) data += name + v;
  }
  return data;
}

/** Twilio signs the URL as it called it: with or without the scheme's default port (as twilio-node's validateRequest tries). */
function urlVariants(url: string): string[] {
  const parsed = new URL(url);
  const defaultPort = parsed.protocol === 'https:' ? '443' : '80';
  const rest = url.slice(url.indexOf('/', url.indexOf('//') + 2));
  const host = parsed.hostname; // an IPv6 address keeps its brackets here
  const port = parsed.port || defaultPort;
  return [`${parsed.protocol}//${host}${rest}`, `${parsed.protocol}//${host}:${port}${rest}`];
}

function deliveryType(params: Params): string {
  const one = (name: string) => (typeof params[name] === 'string' ? (params[name] as string).toLowerCase() : undefined);
  const message = one('MessageStatus') ?? one('SmsStatus');
  if (message && STATUS.test(message)) return `message.${message}`;
  const call = one('CallStatus');
  if (call && STATUS.test(call)) return `call.${call}`;
  return 'request';
}

/**
 * Twilio: `X-Twilio-Signature`, the base64 HMAC-SHA1 under the auth token of
 * the full URL followed by the form parameters sorted by name
 * (https://www.twilio.com/docs/usage/security#validating-requests). The URL is
 * `PUBLIC_URL` + the path when set (behind a proxy, Twilio called a URL this
 * process does not see), else the request's. Key: `I-Twilio-Idempotency-Token`
 * when sent, else a hash of the body (a retry sends the same body). Type:
 * `message.<MessageStatus|SmsStatus>`, `call.<CallStatus>`, else `request`.
 * No timestamp is signed: a replay is stopped by its key.
 */
export function createTwilioVerifier(tokens: readonly string[], context: VerifierContext): Verifier {
  return ({ body, headers, url }) => {
    const signature = headers.get('x-twilio-signature');
    if (!signature) throw new AppError('missing_signature', MISSING_SIGNATURE);
    if (!BASE64_SHA1.test(signature)) throw new AppError('invalid_signature', 'X-Twilio-Signature must be a base64 HMAC-SHA1 (28 characters).');
    if (!url) throw new AppError('invalid_signature', 'The request URL is unknown, so the Twilio signature cannot be checked: set PUBLIC_URL.');
    const received = new URL(url);
    const signedUrl = context.publicUrl ? new URL(received.pathname + received.search, context.publicUrl).toString() : url;
    const params = readForm(body);
    const valid = urlVariants(signedUrl).some((candidate) =>
      matchesAnySecret(signature, tokens, (token) => hmac('sha1', token, signedData(candidate, params), 'base64')),
    );
    if (!valid) {
      throw new AppError(
        'invalid_signature',
        `X-Twilio-Signature does not match TWILIO_AUTH_TOKEN for ${signedUrl}. Behind a proxy, set PUBLIC_URL to the origin Twilio calls.`,
      );
    }
    const token = headers.get('i-twilio-idempotency-token');
    const key = token && token.length <= 255 ? token : `sha256:${createHash('sha256').update(body).digest('hex')}`;
    return { key, type: deliveryType(params), payloadJson: JSON.stringify(params) };
  };
}

const sid = (prefix: string) => `${prefix}${randomBytes(16).toString('hex')}`;

function buildTwilioSample(type: string): Record<string, unknown> {
  const account = sid('AC');
  const common = { AccountSid: account, ApiVersion: '2010-04-01', From: '+15017122661', To: '+15558675310' };
  if (type === 'call.completed') return { ...common, CallSid: sid('CA'), CallStatus: 'completed', Direction: 'outbound-api', CallDuration: '42' };
  const message = sid('SM');
  if (type === 'message.received') return { ...common, MessageSid: message, SmsSid: message, SmsStatus: 'received', Body: 'Hello from hookrun', NumMedia: '0' };
  return { ...common, MessageSid: message, SmsSid: message, MessageStatus: type.slice('message.'.length), SmsStatus: type.slice('message.'.length) };
}

function encodeForm(event: Record<string, unknown>): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(event)) for (const v of Array.isArray(value) ? value : [value]) form.append(name, String(v));
  return form.toString();
}

/** Twilio on `/webhooks/twilio` (form-encoded), token `TWILIO_AUTH_TOKEN`, URL from `PUBLIC_URL` behind a proxy. */
export const twilioProvider = defineProvider({
  title: 'Twilio',
  route: 'twilio',
  name: 'twilio',
  secretEnv: ['TWILIO_AUTH_TOKEN'],
  body: 'form',
  credentialHeaders: ['x-twilio-signature'],
  missingCredentials: { code: 'missing_signature', message: MISSING_SIGNATURE },
  createVerifier: (setting, context) => createTwilioVerifier(setting.values, context),
  sampleTypes: ['message.received', 'message.delivered', 'message.failed', 'call.completed'],
  buildSample: buildTwilioSample,
  envelope: () => ({ AccountSid: `AC${'0'.repeat(32)}` }),
  encode: encodeForm,
  sign: ({ body, secret, url, messageId }) => {
    const params = readForm(new TextEncoder().encode(body));
    return { 'x-twilio-signature': hmac('sha1', secret, signedData(url, params), 'base64'), 'i-twilio-idempotency-token': messageId };
  },
  openapi: {
    summary: 'Twilio webhooks (messages, calls)',
    description:
      'Form-encoded. Secret TWILIO_AUTH_TOKEN; the signed URL is PUBLIC_URL + path when set. Idempotency key: `I-Twilio-Idempotency-Token`, else a hash of the body. Type: `message.<status>`, `call.<status>`, else `request`. Answers JSON, not TwiML: use it for status callbacks and messages that need no synchronous reply.',
    headers: [
      { name: 'X-Twilio-Signature', description: 'base64 HMAC-SHA1 of the URL + sorted parameters', required: true },
      { name: 'I-Twilio-Idempotency-Token', description: 'the idempotency key, when Twilio sends it' },
    ],
  },
});
