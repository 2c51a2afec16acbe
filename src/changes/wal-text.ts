/**
 * The WAL's two kinds of text, turned into what a Supabase Database Webhook
 * would carry: log sequence numbers (`16/B374D848`) and column values, which
 * pgoutput sends in PostgreSQL's text output format.
 */

/** An LSN as a number (bytes into the WAL), for comparing and subtracting. */
export function parseLsn(text: string): bigint {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (!match) throw new Error(`not an LSN: "${text}"`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/** An LSN as PostgreSQL prints it (`0/16B3748`). */
export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** Turns one column's text into its JSON value. */
export type ValueParser = (text: string) => unknown;

const asText: ValueParser = (text) => text;

// Integers and numeric: a number when it has at most 15 significant digits (a double keeps those exactly),
// else the text: a JSON number past that (an int8 id past 2^53) would silently change in every JavaScript handler.
const asExactNumber: ValueParser = (text) => {
  const value = Number(text);
  const significant = text.replace(/^-/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Number.isFinite(value) && significant.length <= 15 ? value : text;
};

// float4/float8: PostgreSQL prints the shortest text that reads back as the same double. NaN and ±Infinity stay text.
const asFloat: ValueParser = (text) => {
  const value = Number(text);
  return Number.isFinite(value) ? value : text;
};

const asBoolean: ValueParser = (text) => text === 't';
const asJson: ValueParser = (text) => JSON.parse(text);

// `2024-05-01 12:00:00.123456+02` → `2024-05-01T12:00:00.123456+02:00`, the form to_jsonb writes (microseconds kept).
const asTimestamp: ValueParser = (text) => {
  if (!/^\d{4}-\d\d-\d\d \d/.test(text)) return text; // infinity, -infinity, BC dates: as PostgreSQL writes them
  const iso = text.replace(' ', 'T');
  return /[+-]\d\d$/.test(iso) ? `${iso}:00` : iso;
};

// Built-in type OIDs (pg_type.oid, fixed since PostgreSQL 7). Anything else — text, uuid, date, numeric
// arrays, enums, bytea (\x…) — stays as PostgreSQL's text.
const PARSERS = new Map<number, ValueParser>([
  [16, asBoolean],
  [20, asExactNumber], // int8
  [21, asExactNumber], // int2
  [23, asExactNumber], // int4
  [26, asExactNumber], // oid
  [700, asFloat], // float4
  [701, asFloat], // float8
  [1700, asExactNumber], // numeric
  [114, asJson],
  [3802, asJson], // jsonb
  [1114, asTimestamp],
  [1184, asTimestamp], // timestamptz
]);

/** The parser for a column of this type OID. */
export function valueParserFor(typeOid: number): ValueParser {
  return PARSERS.get(typeOid) ?? asText;
}
