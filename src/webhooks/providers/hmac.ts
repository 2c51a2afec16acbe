import { createHmac } from 'node:crypto';
import { secureEqual } from '../../secure-compare.js';

/** HMAC of `data` with `secret` (GitHub, Shopify, Twilio all sign this way, each with its own hash and encoding). */
export function hmac(algorithm: 'sha1' | 'sha256' | 'sha512', secret: string, data: string | Uint8Array, encoding: 'hex' | 'base64'): string {
  return createHmac(algorithm, secret).update(data).digest(encoding);
}

/** Whether `offered` is the HMAC of `data` under any secret of a rotation list, compared in constant time. */
export function matchesAnySecret(offered: string, secrets: readonly string[], sign: (secret: string) => string): boolean {
  let matched = false;
  for (const secret of secrets) if (secureEqual(offered, sign(secret))) matched = true; // no early exit: time does not tell which
  return matched;
}
