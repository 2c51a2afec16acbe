import { createHash } from 'node:crypto';
import { AppError } from '../errors.js';

/** What a verifier hands back: the event's identity and its verified raw JSON. */
export interface VerifiedDelivery {
  /** Idempotency key (Stripe event id, svix-id, …), unique per source. */
  key: string;
  type: string;
  /** The verified body as text, stored as jsonb without re-serialising. */
  payloadJson: string;
  /** For senders whose key is an unsigned header: a digest of the signed body; the same body under a new key is stored and marked as a suspected replay. */
  bodyDigest?: string;
}

/** Everything a verifier may look at; `now` is injected so tests move time. */
export interface VerifyInput {
  body: Uint8Array;
  headers: Headers;
  /** The URL as this process received it (Twilio signs the URL; PUBLIC_URL replaces the origin behind a proxy). */
  url?: string;
  nowMs: number;
  toleranceSeconds: number;
}

/** A pure function over raw bytes, headers, secrets and time: returns the delivery or throws `AppError`. */
export type Verifier = (input: VerifyInput) => VerifiedDelivery;

/** Nesting beyond this is refused before parsing: no real provider payload comes close. */
export const MAX_JSON_DEPTH = 64;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Whether `text` holds more than `limit` of `{` and `[` together, by native search (a bound on its nesting). */
function moreOpenersThan(text: string, limit: number): boolean {
  let count = 0;
  for (const opener of ['{', '[']) {
    for (let i = text.indexOf(opener); i !== -1; i = text.indexOf(opener, i + 1)) {
      if (++count > limit) return true;
    }
  }
  return false;
}

/**
 * Fail fast on hostile nesting, so JSON.parse never recurses deeply. Nesting
 * cannot exceed the number of openers, which real payloads keep low, so the
 * character-by-character scan (3 % of the receiver's CPU in a profile) runs
 * only for bodies with more openers than the limit.
 */
function exceedsDepth(text: string, maxDepth: number): boolean {
  if (!moreOpenersThan(text, maxDepth)) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > maxDepth) return true;
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return false;
}

/**
 * Decode verified bytes as UTF-8 JSON and require an object. Runs only after
 * the signature matched: senders sign the exact bytes, so they are verified
 * before any parsing, and an unsigned body is never parsed.
 */
export function parseJsonObject(body: Uint8Array): { text: string; value: Record<string, unknown> } {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new AppError('invalid_payload', 'The body is not valid UTF-8; send the event as UTF-8 JSON.');
  }
  if (exceedsDepth(text, MAX_JSON_DEPTH)) {
    throw new AppError('invalid_payload', `The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AppError('invalid_payload', `The body is not valid JSON: ${(error as Error).message}.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AppError('invalid_payload', 'The body must be a JSON object.');
  }
  return { text, value: value as Record<string, unknown> };
}

/** Read a required string field of a parsed payload, or explain which one is missing. */
export function requireString(value: Record<string, unknown>, field: string, what: string): string {
  const v = value[field];
  if (typeof v !== 'string' || v.length === 0 || v.length > 255) {
    throw new AppError('invalid_payload', `${what} payload needs a string "${field}" (1-255 characters).`);
  }
  return v;
}

/** The SHA-256 of a signed body (hex): how a GitHub or Shopify delivery under a new id is recognised as a suspected replay. */
export const bodyDigestOf = (body: Uint8Array): string => createHash('sha256').update(body).digest('hex');
