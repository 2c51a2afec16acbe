/** The most values one event is findable by: a payload of 100,000 ids costs as much as one of 32. */
export const MAX_SEARCH_KEYS = 32;

/**
 * A provider's object id: a lowercase prefix, an underscore and 8 to 64
 * letters and digits with at least one digit or capital (`cus_NffrFeUfNV2Hib`,
 * `user_2NNEqL2nrIRdJ194ndJqAHwEfxC`, `sub_1P…`, WorkOS's `user_01H…`);
 * `payment_intent` or `cancel_at_period_end` are not ids.
 */
const ID = '[a-z][a-z0-9]{0,15}_(?=[A-Za-z0-9]*[A-Z0-9])[A-Za-z0-9]{8,64}';
const EMAIL = '[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\\.[A-Za-z0-9-]{1,63})*\\.[A-Za-z]{2,24}';
const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';

/**
 * Every search key in a JSON text as one regular expression: a whole JSON
 * string that is an id, an email or a uuid (the upgrade migration's backfill
 * tests each string value for the same three shapes). `searchKeysOf` finds
 * the same matches with a cheaper scan.
 */
export const SEARCH_KEY_PATTERN = `"(${ID}|${EMAIL}|${UUID})"`;
const WHOLE_ID = new RegExp(`^${ID}$`);
const WHOLE_EMAIL = new RegExp(`^${EMAIL}$`);
const WHOLE_UUID = new RegExp(`^${UUID}$`);

/** Whether a key is an email or a uuid, whose case does not matter (an id's does). */
export const foldsCase = (value: string): boolean => value.includes('@') || value.includes('-');

/** How a value is kept and looked up: emails and uuids in lowercase, ids as they are. */
export const normaliseSearchKey = (value: string): string => (foldsCase(value) ? value.toLowerCase() : value);

/** Whether an equals search for `value` can be answered by the search index (an id, an email or a uuid). */
export const isSearchKey = (value: string): boolean => WHOLE_ID.test(value) || WHOLE_EMAIL.test(value) || WHOLE_UUID.test(value);

const DASH = 45;
const LOWER_A = 97;
const LOWER_Z = 122;

/**
 * The values an event is findable by, read off its JSON text without parsing
 * it: every string that is an id, an email or a uuid, once each, at most
 * MAX_SEARCH_KEYS. Cheap next to the insert, and the index they feed holds a
 * few narrow rows per event, not every value.
 *
 * The matches of SEARCH_KEY_PATTERN, found by walking from quote to quote (no
 * key holds a quote, so a match ends at the quote after its first) and
 * testing only a text that can be a key: one holding an `@` (an email), 36
 * characters with a `-` where a uuid has its first (a uuid), or starting
 * with a lowercase letter and holding an `_` (an id). A regular expression
 * over the whole text tried all three shapes at each of its quotes, about
 * half again the time of parsing it.
 */
export function searchKeysOf(json: string): string[] {
  const keys = new Set<string>();
  let at = json.indexOf('@');
  let underscore = json.indexOf('_');
  let open = json.indexOf('"');
  while (open !== -1 && keys.size < MAX_SEARCH_KEYS) {
    const close = json.indexOf('"', open + 1);
    if (close === -1) break;
    const value = keyBetween(open, close);
    if (value === undefined) {
      open = close;
      continue;
    }
    keys.add(normaliseSearchKey(value));
    open = json.indexOf('"', close + 1);
  }
  return [...keys];

  /** The text between two quotes, if it is a key. */
  function keyBetween(open: number, close: number): string | undefined {
    const shape = shapeBetween(open, close);
    if (shape === undefined) return undefined;
    const value = json.slice(open + 1, close);
    return shape.test(value) ? value : undefined;
  }

  /** The one shape the text between two quotes can have, told from its length and a character or two; `at` and `underscore` move forward only, one scan of the text each. */
  function shapeBetween(open: number, close: number): RegExp | undefined {
    const length = close - open - 1;
    if (length < 6) return undefined;
    if (at !== -1 && at < open) at = json.indexOf('@', open);
    if (at !== -1 && at < close) return WHOLE_EMAIL;
    if (length === 36 && json.charCodeAt(open + 9) === DASH) return WHOLE_UUID;
    const first = json.charCodeAt(open + 1);
    if (length < 10 || first < LOWER_A || first > LOWER_Z) return undefined;
    if (underscore !== -1 && underscore < open) underscore = json.indexOf('_', open);
    return underscore !== -1 && underscore < close ? WHOLE_ID : undefined;
  }
}
