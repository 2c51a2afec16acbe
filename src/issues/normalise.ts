import { createHash } from 'node:crypto';

/** A message longer than this is cut before it is normalised and hashed (the tail of a stack never decides the group). */
const MAX_CHARS = 500;

/**
 * A provider's id: a short lowercase prefix and an underscore, then a token
 * with a capital or a digit in it (`cus_X`, `evt_1NqY…`) or made of two parts
 * or more (`cus_story_ab12cd`). A plain snake_case word (`user_id`,
 * `card_declined`) is left as it is: it names the bug, not the occurrence.
 */
const PROVIDER_ID = /\b[a-z]{2,8}_(?:(?=[A-Za-z0-9]*[A-Z0-9])[A-Za-z0-9]+|[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+)\b/g;

const RULES: Array<[RegExp, string]> = [
  [/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '<v>'], // quoted values
  [/[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/g, '<email>'], // email addresses
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<id>'], // uuids
  [/\b\d{4}-\d{2}-\d{2}[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?/g, '<time>'], // ISO times
  [PROVIDER_ID, '<id>'], // provider ids: cus_X, cus_story_ab12, evt_1Nq…, user_2x…
  [/\b[0-9a-f]{12,}\b/gi, '<id>'], // hex ids and hashes
  [/\b[A-Za-z0-9]*\d[A-Za-z0-9]*\b/g, '<n>'], // numbers, and words with digits in them
];

/**
 * The shape of an error message without what varies between occurrences
 * (numbers, provider ids, uuids, emails, quoted values, times), so "user 123 not found" and
 * "user 456 not found" are one issue and "card declined" another.
 */
export function normaliseMessage(message: string): string {
  let text = message.slice(0, MAX_CHARS).replace(/\s*\(gave up after \d+ attempts?\)$/, ''); // a dead attempt's message is its failures'
  for (const [pattern, replacement] of RULES) text = text.replace(pattern, replacement);
  return text.replace(/\s+/g, ' ').trim();
}

/** A short stable hash of a normalised message: the part of a fingerprint that tells one message from another. */
export function messageHash(normalised: string): string {
  return createHash('sha256').update(normalised).digest('hex').slice(0, 16);
}
