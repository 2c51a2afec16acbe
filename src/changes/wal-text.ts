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

// A number when JSON can carry it exactly, else the text (as to_jsonb would give, but a JSON number
// past 2^53 or with more digits than a double holds would silently change in every JavaScript handler).
const asNumber: ValueParser = (text) => {
  const value = Number(text);
  return Number.isFinite(value) && String(value) === text ? value : text;
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
  [20, asNumber], // int8
  [21, asNumber], // int2
  [23, asNumber], // int4
  [26, asNumber], // oid
  [700, asNumber], // float4
  [701, asNumber], // float8
  [1700, asNumber], // numeric
  [114, asJson],
  [3802, asJson], // jsonb
  [1114, asTimestamp],
  [1184, asTimestamp], // timestamptz
]);

/** The parser for a column of this type OID. */
export function valueParserFor(typeOid: number): ValueParser {
  return PARSERS.get(typeOid) ?? asText;
}
