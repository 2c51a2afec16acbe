import { readDuration } from './duration.js';
import { INSTANT_HINT, readInstant } from './instant.js';

/**
 * Read a `--since` option: a duration back from now (`90m`, `12h`, `3d`,
 * `1w`: the one duration grammar) or a date or time (the one date reader:
 * `2026-11-20`, `2026-11-20T08:00:00Z`). Throws a message that says what to
 * write; a time in the future is refused.
 */
export function parseSince(text: string, nowMs: number, name = '--since'): Date {
  const back = readDuration(text);
  const at = back === undefined ? readInstant(text) : new Date(nowMs - back);
  if (!at) throw new Error(`${name} "${text.slice(0, 40)}" is neither a duration back from now (like 90m, 12h, 3d or 1w) nor a date or time: ${INSTANT_HINT}.`);
  if (at.getTime() > nowMs) throw new Error(`${name} "${text}" is in the future.`);
  return at;
}
