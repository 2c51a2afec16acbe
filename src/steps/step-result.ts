import { StepError } from './step-signals.js';

/** A step's stored result is at most this many bytes of JSON (store larger data in your own table and return its id). */
export const MAX_STEP_RESULT_BYTES = 256 * 1024;

/** A sleep or a wait lasts at most this long (a year and a day). */
export const MAX_SLEEP_MS = 366 * 86_400_000;

/** Steps one delivery may have: more is a loop calling `ctx.step` with ids that never repeat. */
export const MAX_STEPS_PER_DELIVERY = 1000;

/** What to return instead of a value JSON cannot carry, by what it is. */
function insteadOf(value: unknown): string | undefined {
  if (value instanceof Date) return 'a Date: return date.toISOString() and make a Date of it where you use it';
  if (typeof value === 'bigint') return 'a BigInt: return String(n) (or a number, when it fits)';
  if (typeof value === 'number' && !Number.isFinite(value)) return `${value}: return null or a string`;
  if (typeof value === 'function' || typeof value === 'symbol') return `a ${typeof value}: return plain data`;
  if (value instanceof Map) return 'a Map: return Object.fromEntries(map)';
  if (value instanceof Set) return 'a Set: return [...set]';
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null)
      return `an instance of ${(value as object).constructor?.name ?? 'a class'}: return a plain object with the fields you need ({ id: x.id, … })`;
  }
  return undefined;
}

/** The first value in `value` JSON cannot carry, with its path; undefined when it is all plain data. */
function findUnserialisable(value: unknown, path: string, depth: number): { path: string; problem: string } | undefined {
  const problem = insteadOf(value);
  if (problem) return { path, problem };
  if (depth > 100) return { path, problem: 'nested over 100 levels deep: return something flatter' };
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = findUnserialisable(item, `${path}[${i}]`, depth + 1);
      if (found) return found;
    }
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined) continue;
      const found = findUnserialisable(item, `${path}.${key}`, depth + 1);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * A step's result as the JSON text stored for it (null for `undefined`), or a
 * terminal StepError that names the step, the bad value's path and what to
 * return instead; past `maxBytes` (MAX_STEP_RESULT_BYTES), one that says to
 * store it elsewhere. The step's function has run: it is not run again.
 */
export function stepResultJson(stepId: string, value: unknown, maxBytes = MAX_STEP_RESULT_BYTES): string | null {
  if (value === undefined) return null;
  const bad = findUnserialisable(value, 'result', 0);
  if (bad) throw new StepError(`ctx.step("${stepId}"): ${bad.path} is ${bad.problem}. A step's result is stored as JSON.`, { terminal: true });
  const json = JSON.stringify(value);
  const bytes = Buffer.byteLength(json);
  if (bytes > maxBytes)
    throw new StepError(
      `ctx.step("${stepId}"): its result is ${Math.ceil(bytes / 1024)} KB of JSON; a step may store at most ${Math.floor(maxBytes / 1024)} KB. Write large data to your own table (ctx.db) and return its id.`,
      { terminal: true },
    );
  return json;
}
