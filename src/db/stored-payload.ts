import { createRequire } from 'node:module';
import type * as LosslessJson from 'lossless-json';

let losslessJson: typeof LosslessJson | undefined;
/**
 * lossless-json, loaded the first time a text may hold an integer beyond 2^53
 * (most payloads never do): its ES build is 10 modules a cold start would load
 * for nothing. Required, as its callers (the drivers' json parsers) are synchronous.
 */
const lossless = (): typeof LosslessJson => (losslessJson ??= createRequire(import.meta.url)('lossless-json') as typeof LosslessJson);

/**
 * A number token of 16 digits or more (at the start, or after `[`, `,` or
 * `:`): the only text in which an integer can lie beyond 2^53. A long run of
 * digits inside a string (an id, a snowflake sent as text) does not count:
 * JSON.parse keeps strings exactly.
 */
const LONG_NUMBER = /(?:^|[[,:])\s*-?\d{16}/;

/** Whether `text` may hold an integer JSON.parse would round (false means JSON.parse is exact for it). */
export const mayHoldUnsafeInteger = (text: string): boolean => LONG_NUMBER.test(text);

const INTEGER = /^-?\d+$/;

/** An integer beyond 2^53 keeps its digits as a string; every other number is a number, as JSON.parse gives it. */
const exactInteger = (digits: string): unknown => (INTEGER.test(digits) && !Number.isSafeInteger(Number(digits)) ? digits : Number(digits));

/**
 * A json or jsonb value as hookrun's drivers give it to handlers, the admin
 * API and the dashboard (both databases parse json with this). PostgreSQL stores an int8 id or a snowflake exactly;
 * JSON.parse would round it (9223372036854775807 → 9223372036854776000), so
 * an integer beyond 2^53 arrives as a string of its exact digits. Text without
 * a number of 16 digits or more cannot hold one and takes JSON.parse's
 * fast path.
 */
export function parseStoredPayload(text: string): unknown {
  return mayHoldUnsafeInteger(text) ? lossless().parse(text, null, exactInteger) : JSON.parse(text);
}

/** PGlite's parsers for json (114) and jsonb (3802) (an option of the instance, or of one query), as node-postgres gets them in postgres-database.ts. */
export const JSON_PARSERS = { parsers: { 114: parseStoredPayload, 3802: parseStoredPayload } };

/** An integer beyond 2^53 as a LosslessNumber (its digits, written back as a number); every other number a number. */
const keepExactInteger = (digits: string): unknown =>
  INTEGER.test(digits) && !Number.isSafeInteger(Number(digits)) ? new (lossless().LosslessNumber)(digits) : Number(digits);

/**
 * JSON from a provider's API that hookrun stores again (gap repair): an
 * integer beyond 2^53 is kept exactly, so `stringifyExactJson` writes the
 * digits the provider sent instead of JSON.parse's rounding of them.
 */
export function parseExactJson(text: string): unknown {
  return mayHoldUnsafeInteger(text) ? lossless().parse(text, null, keepExactInteger) : JSON.parse(text);
}

/** JSON text of a value `parseExactJson` read, its exact integers included. */
export function stringifyExactJson(value: unknown): string {
  return lossless().stringify(value) ?? 'null';
}
