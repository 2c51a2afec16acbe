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

/** A whole JSON string that is a search key (the upgrade migration's backfill tests each string value for the same three shapes). */
export const SEARCH_KEY_PATTERN = `"(${ID}|${EMAIL}|${UUID})"`;
const SEARCH_KEY = new RegExp(SEARCH_KEY_PATTERN, 'g');
const WHOLE = new RegExp(`^(?:${ID}|${EMAIL}|${UUID})$`);

/** Whether a key is an email or a uuid, whose case does not matter (an id's does). */
export const foldsCase = (value: string): boolean => value.includes('@') || value.includes('-');

/** How a value is kept and looked up: emails and uuids in lowercase, ids as they are. */
export const normaliseSearchKey = (value: string): string => (foldsCase(value) ? value.toLowerCase() : value);

/** Whether an equals search for `value` can be answered by the search index (an id, an email or a uuid). */
export const isSearchKey = (value: string): boolean => WHOLE.test(value);

/**
 * The values an event is findable by, read off its JSON text without parsing
 * it: every string that is an id, an email or a uuid, once each, at most
 * MAX_SEARCH_KEYS. Cheap next to the insert (a scan of the text), and the
 * index they feed holds a few narrow rows per event, not every value.
 */
export function searchKeysOf(json: string): string[] {
  const keys = new Set<string>();
  SEARCH_KEY.lastIndex = 0;
  for (let match = SEARCH_KEY.exec(json); match !== null && keys.size < MAX_SEARCH_KEYS; match = SEARCH_KEY.exec(json)) keys.add(normaliseSearchKey(match[1]!));
  return [...keys];
}
