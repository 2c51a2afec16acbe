import { messageOf } from '../errors.js';
import { parseDuration } from '../time/duration.js';
import type { Clock } from '../clock.js';
import type { Queryable } from '../db/database.js';
import { MAX_SLEEP_MS } from './step-result.js';
import type { StepWrite, StoredStep } from './steps-sql.js';
import { StepError } from './step-signals.js';
import { findEarlierEvent, readEventPayload, rememberWaitPath, waitKeyOf } from './wait-sql.js';

/** The delivery's steps as a wait uses them (DeliverySteps). */
interface StepLedger {
  readonly calls: number;
  enter(id: string, call: string): Promise<StoredStep | undefined>;
  record(step: StepWrite): Promise<boolean>;
  suspend(until: number): never;
}

/** What a wait takes (the public WaitForEventOptions, by name). */
export interface WaitOptions {
  on: string;
  match: string;
  timeout: string | number;
}

/** What a wait matches against: the delivery's event, and where an `on` name's events arrive (throws when no configured sender delivers them). */
export interface WaitScope {
  event: { id: number; payload: unknown };
  resolveEventName: (name: string) => { route: string; type: string };
}

const terminal = (message: string) => new StepError(message, { terminal: true });

/** The text at a dotted path of a payload: a string as it is, a number or boolean as JSON writes it; undefined for anything else. */
function valueAt(payload: unknown, path: string): string | undefined {
  let value: unknown = payload;
  for (const part of path.split('.')) value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[part] : undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  return undefined;
}

/** The wait's parts checked: the event name resolved, the timeout read, this event's value at `match`. */
function readWait(scope: WaitScope, id: string, o: WaitOptions) {
  const call = `ctx.waitForEvent("${id}")`;
  if (typeof o !== 'object' || o === null || typeof o.on !== 'string' || typeof o.match !== 'string')
    throw terminal(`${call}: pass { on: '<provider>:<type>', match: 'data.object.customer', timeout: '1d' }.`);
  let where: { route: string; type: string };
  let timeoutMs: number;
  try {
    where = scope.resolveEventName(o.on);
    timeoutMs = parseDuration(o.timeout, `${call} timeout`);
  } catch (error) {
    throw terminal(`${call}: ${messageOf(error)}`);
  }
  if (timeoutMs > MAX_SLEEP_MS) throw terminal(`${call}: timeout is at most a year (366 days).`);
  if (!/^[^.\s]+(\.[^.\s]+)*$/.test(o.match)) throw terminal(`${call}: match "${o.match}" must be a dotted path like data.object.customer.`);
  const value = valueAt(scope.event.payload, o.match);
  if (value === undefined)
    throw terminal(`${call}: this event has no text or number at "${o.match}"; match on a path both events carry (e.g. data.object.customer).`);
  return { ...where, eventName: `${where.route}:${where.type}`, timeoutMs, value, path: o.match };
}

/**
 * Wait for an event named `on` whose value at `match` equals this event's:
 * an earlier one received within `timeout` is taken at once; otherwise the
 * wait is stored (keyed for the claim's lookup, inbox/claim.ts) and the
 * attempt ends until the timeout or a match. Its result is the matching
 * event's payload, or null at the timeout.
 */
export async function waitForEvent(steps: StepLedger, scope: { db: Queryable; clock: Clock }, id: string, o: WaitOptions, on: WaitScope): Promise<unknown> {
  const wait = readWait(on, id, o);
  const row = await steps.enter(id, 'ctx.waitForEvent');
  if (row?.status === 'succeeded') return row.result ?? null;
  if (row && row.status !== 'waiting') throw terminal(`step "${id}" was stored as another kind of step by an earlier attempt: give the wait another id.`);
  const now = scope.clock.now();
  const base = { stepId: id, seq: row?.seq ?? steps.calls - 1, error: null, attempts: 1, startedAt: now, durationMs: 0 };
  const done = async (payload: unknown) => {
    await steps.record({
      ...base,
      status: 'succeeded',
      resultJson: payload === null ? 'null' : JSON.stringify(payload),
      wakeAt: row?.wakeAt ?? null,
      waitKey: null,
    });
    return payload;
  };
  if (row?.matchedEventId != null) return done((await readEventPayload(scope.db, row.matchedEventId)) ?? null);
  if (row && row.wakeAt !== null && now >= row.wakeAt) return done(null);
  if (!row) {
    await rememberWaitPath(scope.db, wait.eventName, wait.path);
    const until = now + wait.timeoutMs;
    await steps.record({ ...base, status: 'waiting', resultJson: null, wakeAt: until, waitKey: waitKeyOf(wait.eventName, wait.path, wait.value) });
    // Looked for after the wait is stored: an event that arrives meanwhile is found here or matched by its claim.
    const earlier = await findEarlierEvent(scope.db, { ...wait, since: now - wait.timeoutMs, exceptId: on.event.id });
    if (earlier) return done(earlier.payload);
    return steps.suspend(until);
  }
  return steps.suspend(row.wakeAt ?? now);
}
