import { AppError } from '../../errors.js';
import { parseJsonObject, type Verifier } from '../delivery.js';
import type { ProviderDefinition } from '../provider.js';
import { idempotencyKeyOf, readRawJsonPath } from '../raw-json-path.js';
import { hmac, matchesAnySecret } from './hmac.js';

/**
 * What a platform.json `webhooks` entry tells about its sender, as config
 * validated it (config passes it in: the providers import no config).
 */
export interface CustomScheme {
  /** `/webhooks/<route>`, also the events' source. */
  route: string;
  /** The env variable holding the secret (named in messages and docs). */
  secretEnv: string;
  algorithm: 'sha1' | 'sha256' | 'sha512';
  /** The header carrying the signature. */
  header: string;
  encoding: 'hex' | 'base64';
  /** Text before the digest in the header (`sha256=`), or ''. */
  prefix: string;
  /** A header with the signing time in unix seconds; then `<timestamp>.<body>` is signed. */
  timestampHeader: string | undefined;
  toleranceSeconds: number;
  /** Dotted JSON paths of the idempotency key and the event type in the body. */
  keyPath: string;
  typePath: string;
}

/**
 * The id or type at a dotted path (`event.id`), read from the body's text,
 * not its parsed value: a number keeps its literal text, so ids past 2^53
 * and `1` / `1.0` / `"1"` stay distinct keys (rule in raw-json-path.ts).
 */
function readPath(text: string, path: string, asKey: boolean): string | undefined {
  const found = readRawJsonPath(text, path);
  if (!found) return undefined;
  const read = asKey ? idempotencyKeyOf(found) : found.kind === 'string' ? found.value : found.kind === 'number' ? found.text : undefined;
  return read !== undefined && read.length > 0 && read.length <= 255 ? read : undefined;
}

/** The answer to a delivery without the scheme's signature header: from the verifier, and before the body is read. */
const missingSignature = (scheme: CustomScheme) => `Missing ${scheme.header} header: send the request exactly as the sender signs it.`;

const signedBytes = (timestamp: string | undefined, body: Uint8Array | string): Uint8Array | string =>
  timestamp === undefined ? body : Buffer.concat([Buffer.from(`${timestamp}.`), Buffer.from(body)]);

/**
 * A sender described in platform.json `webhooks`: `<header>: <prefix><HMAC>`
 * of the body, or of `<timestamp>.<body>` when it names a timestamp header
 * (then checked against `toleranceSeconds` both ways); key and type read
 * from the verified JSON text at `keyPath` and `typePath`.
 */
export function createCustomVerifier(scheme: CustomScheme, secrets: readonly string[]): Verifier {
  return ({ body, headers, nowMs }) => {
    const offered = headers.get(scheme.header);
    if (!offered) throw new AppError('missing_signature', missingSignature(scheme));
    if (!offered.startsWith(scheme.prefix)) throw new AppError('invalid_signature', `${scheme.header} must start with "${scheme.prefix}".`);
    let timestamp: string | undefined;
    if (scheme.timestampHeader) {
      timestamp = headers.get(scheme.timestampHeader) ?? undefined;
      if (!timestamp || !/^\d{1,12}$/.test(timestamp))
        throw new AppError('invalid_signature', `${scheme.timestampHeader} must be the signing time in unix seconds.`);
    }
    const signed = signedBytes(timestamp, body);
    if (!matchesAnySecret(offered.slice(scheme.prefix.length), secrets, (secret) => hmac(scheme.algorithm, secret, signed, scheme.encoding))) {
      throw new AppError('invalid_signature', `${scheme.header} does not match ${scheme.secretEnv}. Check it and that the body is forwarded unchanged.`);
    }
    if (timestamp !== undefined && Math.abs(Math.floor(nowMs / 1000) - Number(timestamp)) > scheme.toleranceSeconds) {
      throw new AppError('timestamp_out_of_tolerance', `${scheme.timestampHeader} is more than ${scheme.toleranceSeconds} s from now; check the clock.`);
    }
    const { text } = parseJsonObject(body);
    const key = readPath(text, scheme.keyPath, true);
    const type = readPath(text, scheme.typePath, false);
    if (!key || !type)
      throw new AppError(
        'invalid_payload',
        `A ${scheme.route} event needs "${scheme.keyPath}" and "${scheme.typePath}", each a string or a number (1-255 characters).`,
      );
    return { key, type, payloadJson: text };
  };
}

/** A platform.json sender as a provider definition: verified, documented and signable like the shipped ones. */
export function customProvider(scheme: CustomScheme): ProviderDefinition {
  return {
    title: scheme.route,
    route: scheme.route,
    name: scheme.route,
    secretEnv: [scheme.secretEnv],
    body: 'json',
    credentialHeaders: [scheme.header.toLowerCase()],
    missingCredentials: { code: 'missing_signature', message: missingSignature(scheme) },
    createVerifier: (setting) => createCustomVerifier(scheme, setting.values),
    envelope: (type) => Object.fromEntries([[scheme.typePath.split('.')[0]!, type]]),
    sign: ({ body, secret, nowMs }) => {
      const timestamp = scheme.timestampHeader ? String(Math.floor(nowMs / 1000)) : undefined;
      const signature = `${scheme.prefix}${hmac(scheme.algorithm, secret, signedBytes(timestamp, body), scheme.encoding)}`;
      return {
        [scheme.header.toLowerCase()]: signature,
        ...(scheme.timestampHeader && timestamp ? { [scheme.timestampHeader.toLowerCase()]: timestamp } : {}),
      };
    },
    openapi: {
      summary: `${scheme.route} (platform.json webhooks)`,
      description: `HMAC-${scheme.algorithm.toUpperCase()} (${scheme.encoding}) of ${scheme.timestampHeader ? `\`<${scheme.timestampHeader}>.<body>\`, within ${scheme.toleranceSeconds} s` : 'the body'}; secret ${scheme.secretEnv}. Idempotency key: \`${scheme.keyPath}\`; type: \`${scheme.typePath}\`.`,
      headers: [
        { name: scheme.header, description: `\`${scheme.prefix}<digest>\``, required: true },
        ...(scheme.timestampHeader ? [{ name: scheme.timestampHeader, description: 'unix seconds', required: true }] : []),
      ],
    },
  };
}
