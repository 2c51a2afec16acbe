import { createHash } from 'node:crypto';
import { MalformedPayloadError } from '../api/malformed-payload.js';
import { messageOf } from '../errors.js';
import { MAX_PRIORITY_SECONDS, type FlowPlan } from './options.js';

/** Keys longer than this are stored as their SHA-256, so any key fits the index. */
export const MAX_KEY_CHARS = 256;

/**
 * The delivery's flow key: '' when the handler has no key function, else
 * what it returned, as a string (a long one hashed). A key function that
 * throws or returns something else cannot be retried into working: the
 * delivery goes dead with the reason, to be replayed once the handler is fixed.
 */
export function flowKeyOf(plan: FlowPlan, payload: unknown): string {
  if (!plan.key) return '';
  let value: unknown;
  try {
    value = plan.key(payload);
  } catch (error) {
    throw new MalformedPayloadError(`The handler's key function threw: ${messageOf(error)}. Fix it, then replay the event.`);
  }
  if ((typeof value !== 'string' && typeof value !== 'number') || value === '' || (typeof value === 'number' && !Number.isFinite(value)))
    throw new MalformedPayloadError(
      `The handler's key function returned ${value === '' ? 'an empty string' : typeof value}; it must return a non-empty string or a number. Fix it, then replay the event.`,
    );
  const key = String(value);
  return key.length > MAX_KEY_CHARS ? `sha256:${createHash('sha256').update(key).digest('hex')}` : key;
}

/** The delivery's priority in milliseconds (positive: ahead), bounded to ±MAX_PRIORITY_SECONDS. */
export function priorityMsOf(plan: FlowPlan, payload: unknown): number {
  if (!plan.priority) return 0;
  let value: unknown;
  try {
    value = plan.priority(payload);
  } catch (error) {
    throw new MalformedPayloadError(`The handler's priority function threw: ${messageOf(error)}. Fix it, then replay the event.`);
  }
  if (typeof value !== 'number' || Number.isNaN(value))
    throw new MalformedPayloadError(
      `The handler's priority function returned ${typeof value}; it must return seconds (a number). Fix it, then replay the event.`,
    );
  return Math.max(-MAX_PRIORITY_SECONDS, Math.min(MAX_PRIORITY_SECONDS, value)) * 1000;
}
