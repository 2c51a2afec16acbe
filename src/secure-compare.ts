import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string | Uint8Array) => createHash('sha256').update(value).digest();

/**
 * Compare a secret someone offered with the one we hold, in constant time:
 * both sides are hashed first, so neither their contents nor their lengths
 * show in the timing. An empty offer never matches. The one comparison of
 * hookrun's tokens, bearers, cookies and signatures.
 */
export function secureEqual(offered: string | Uint8Array | undefined, expected: string | Uint8Array): boolean {
  if (offered === undefined) return false;
  const equal = timingSafeEqual(digest(offered), digest(expected));
  return equal && offered.length > 0;
}

/** Whether the offer equals any of the secrets (rotation lists); every one is compared, so timing says nothing about which. */
export function secureEqualAny(offered: string | undefined, secrets: readonly string[]): boolean {
  let matched = false;
  for (const secret of secrets) matched = secureEqual(offered, secret) || matched;
  return matched;
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  return /^Bearer\s+(.+)$/i.exec(header ?? '')?.[1]?.trim();
}
