import type { StepOptions } from '../api/steps.js';
import type { Clock } from '../clock.js';
import type { Queryable } from '../db/database.js';
import { messageOf } from '../errors.js';
import { parseDuration } from '../time/duration.js';
import { parseInstant } from '../time/instant.js';
import { MAX_SLEEP_MS, MAX_STEPS_PER_DELIVERY, stepResultJson } from './step-result.js';
import { DeliverySuspended, StepError } from './step-signals.js';
import { readSteps, writeStep, type StepFence, type StepWrite, type StoredStep } from './steps-sql.js';
import { waitForEvent, type WaitOptions, type WaitScope } from './wait-for-event.js';

/** What a delivery's steps need: queries that commit on their own (never the handler's transaction), time, and the claim that fences the writes. */
export interface StepScope {
  db: Queryable;
  clock: Clock;
  fence: StepFence;
  maxResultBytes?: number;
}

const terminal = (message: string) => new StepError(message, { terminal: true });

/**
 * The steps of one attempt of one delivery: each `step` runs its function
 * once per delivery and stores its result when it ends; a later attempt
 * (a retry, a replay, a resume after a sleep or a crash) returns the stored
 * result and goes on at the first step that has not succeeded. Steps must be
 * called in the same order on every attempt; a sleep or a wait ends the
 * attempt (DeliverySuspended) until its time.
 */
export class DeliverySteps {
  private stored: Map<string, StoredStep> | undefined;
  private readonly called = new Set<string>();
  private suspended: number | undefined;

  constructor(readonly scope: StepScope) {}

  /** Steps called so far in this attempt. */
  get calls(): number {
    return this.called.size;
  }

  /** When a sleep or wait ended this attempt (ms epoch), even if the handler caught the signal. */
  get suspendedUntil(): number | undefined {
    return this.suspended;
  }

  /** Run `fn` once per delivery: its stored result when it already succeeded. */
  async step<T>(id: string, fn: () => T | Promise<T>, options?: StepOptions): Promise<Awaited<T>> {
    const policy = readOptions(id, options);
    const row = await this.enter(id, 'ctx.step');
    if (row?.status === 'succeeded') return row.result as Awaited<T>;
    if (row && row.status !== 'failed') throw changedKind(id, row);
    const attempts = (row?.attempts ?? 0) + 1;
    const startedAt = this.scope.clock.now();
    const began = performance.now();
    const base = { stepId: id, seq: this.called.size - 1, attempts, startedAt, wakeAt: null, waitKey: null };
    let value: Awaited<T>;
    try {
      value = await fn();
    } catch (error) {
      await this.record({ ...base, status: 'failed', resultJson: null, error: messageOf(error), durationMs: performance.now() - began });
      const last = policy.attempts !== undefined && attempts >= policy.attempts;
      const failed = new StepError(`step "${id}" failed${last ? ` ${attempts} times` : ''}: ${messageOf(error)}`, {
        terminal: last,
        backoffMs: policy.backoffMs,
        cause: error,
      });
      if (error instanceof Error && error.stack) failed.stack = error.stack;
      throw failed;
    }
    let json: string | null;
    try {
      json = stepResultJson(id, value, this.scope.maxResultBytes);
    } catch (error) {
      await this.record({ ...base, status: 'failed', resultJson: null, error: messageOf(error), durationMs: performance.now() - began });
      throw error;
    }
    const stored = await this.record({ ...base, status: 'succeeded', resultJson: json, error: null, durationMs: performance.now() - began });
    return stored ? value : (this.stored!.get(id)!.result as Awaited<T>);
  }

  /** End this attempt until `duration` from now; a later attempt goes on after it. */
  async sleep(id: string, duration: string | number): Promise<void> {
    let ms: number;
    try {
      ms = parseDuration(duration, `ctx.sleep("${id}")`, { zero: true });
    } catch (error) {
      throw terminal(messageOf(error));
    }
    await this.sleepUntilMs(id, () => this.scope.clock.now() + ms);
  }

  /** End this attempt until `at` (a Date or an ISO 8601 text); a later attempt goes on after it. */
  async sleepUntil(id: string, at: Date | string): Promise<void> {
    let ms: number;
    try {
      ms = at instanceof Date ? at.getTime() : parseInstant(String(at), `ctx.sleepUntil("${id}")`).getTime();
    } catch (error) {
      throw terminal(messageOf(error));
    }
    if (!Number.isFinite(ms)) throw terminal(`ctx.sleepUntil("${id}"): the date is invalid; pass a valid Date or an ISO 8601 text.`);
    await this.sleepUntilMs(id, () => ms);
  }

  private async sleepUntilMs(id: string, wakeAt: () => number): Promise<void> {
    const row = await this.enter(id, 'ctx.sleep');
    if (row?.status === 'succeeded') return;
    if (row && row.status !== 'sleeping') throw changedKind(id, row);
    const now = this.scope.clock.now();
    const until = row?.wakeAt ?? wakeAt();
    if (!row && until - now > MAX_SLEEP_MS) throw terminal(`ctx.sleep("${id}"): at most a year (366 days) ahead; sleep in several steps, or schedule a job.`);
    const step: StepWrite = {
      stepId: id,
      seq: row?.seq ?? this.called.size - 1,
      status: 'succeeded',
      resultJson: null,
      error: null,
      attempts: 1,
      startedAt: now,
      durationMs: 0,
      wakeAt: until,
      waitKey: null,
    };
    if (until <= now) {
      await this.record(step);
      return;
    }
    if (!row) await this.record({ ...step, status: 'sleeping' });
    this.suspend(until);
  }

  /** Wait for a matching event (wait-for-event.ts): its payload, or null at the timeout. */
  waitForEvent(id: string, options: WaitOptions, on: WaitScope): Promise<unknown> {
    return waitForEvent(this, this.scope, id, options, on);
  }

  /**
   * Begin a step: its id once per run, at most MAX_STEPS_PER_DELIVERY, in
   * the order an earlier attempt stored (else the code changed under the
   * delivery). Returns its stored row, if any.
   */
  async enter(id: string, call: string): Promise<StoredStep | undefined> {
    if (this.suspended !== undefined) throw new DeliverySuspended(this.suspended);
    if (typeof id !== 'string' || id.length === 0 || id.length > 200)
      throw terminal(`${call}: the step id must be a text of 1 to 200 characters (got ${JSON.stringify(id)}).`);
    if (this.called.has(id))
      throw terminal(`${call}("${id}") was called twice in one run: give each step its own id (in a loop, add the item's id: \`email-\${user.id}\`).`);
    if (this.called.size >= MAX_STEPS_PER_DELIVERY)
      throw terminal(`${call}("${id}"): a delivery may have at most ${MAX_STEPS_PER_DELIVERY} steps; do a loop's items in one step, or one event per item.`);
    const seq = this.called.size;
    this.called.add(id);
    this.stored ??= await readSteps(this.scope.db, this.scope.fence.deliveryId);
    const row = this.stored.get(id);
    const there = [...this.stored.values()].find((s) => s.seq === seq && s.stepId !== id && s.status !== 'failed');
    if ((row && row.seq !== seq && row.status !== 'failed') || (!row && there))
      throw terminal(
        `${call}("${id}") is step ${seq + 1} of this run, but an earlier attempt stored ${row ? `it as step ${row.seq + 1}` : `"${there!.stepId}" there`}: the handler's steps changed under this delivery. Deploy the earlier step order until it finishes, or replay it from the start (hookrun events replay <event> --from-start).`,
      );
    return row;
  }

  /** Write a step's end (fenced); false when another attempt stored it first (its stored row is read back). */
  async record(step: StepWrite): Promise<boolean> {
    if (await writeStep(this.scope.db, this.scope.fence, step)) {
      this.stored!.set(step.stepId, {
        stepId: step.stepId,
        seq: step.seq,
        status: step.status,
        result: step.resultJson === null ? undefined : JSON.parse(step.resultJson),
        attempts: step.attempts,
        wakeAt: step.wakeAt,
        matchedEventId: null,
      });
      return true;
    }
    this.stored = await readSteps(this.scope.db, this.scope.fence.deliveryId);
    if (this.stored.get(step.stepId)?.status === 'succeeded') return false;
    throw new StepError(`step "${step.stepId}": this attempt no longer holds the delivery (its lease ran out and another worker claimed it); it stops here.`, {
      terminal: false,
    });
  }

  /** End this attempt until `until` (ms epoch). */
  suspend(until: number): never {
    this.suspended = until;
    throw new DeliverySuspended(until);
  }
}

function readOptions(id: string, options: StepOptions | undefined): { attempts?: number; backoffMs?: number } {
  if (options === undefined) return {};
  const { attempts, backoff } = options;
  if (attempts !== undefined && (!Number.isInteger(attempts) || attempts < 1))
    throw terminal(`ctx.step("${id}"): attempts must be a positive integer (got ${JSON.stringify(attempts)}).`);
  try {
    return { attempts, backoffMs: backoff === undefined ? undefined : parseDuration(backoff, `ctx.step("${id}") backoff`) };
  } catch (error) {
    throw terminal(messageOf(error));
  }
}

const changedKind = (id: string, row: StoredStep) =>
  terminal(
    `step "${id}" was stored as a ${row.status === 'succeeded' || row.status === 'failed' ? 'step' : row.status === 'sleeping' ? 'sleep' : 'wait'} by an earlier attempt: the handler's steps changed under this delivery. Give the new one another id, or replay it from the start (hookrun events replay <event> --from-start).`,
  );
