import type { Queryable } from '../db/database.js';

/** A step as stored for its delivery. */
export interface StoredStep {
  stepId: string;
  seq: number;
  status: 'succeeded' | 'failed' | 'sleeping' | 'waiting';
  /** The step's JSON result; undefined for a step that returned nothing. */
  result: unknown;
  attempts: number;
  wakeAt: number | null;
  matchedEventId: number | null;
}

/** One step's end, as the step writes it. */
export interface StepWrite {
  stepId: string;
  seq: number;
  status: StoredStep['status'];
  /** JSON text, or null. */
  resultJson: string | null;
  error: string | null;
  attempts: number;
  startedAt: number;
  durationMs: number;
  wakeAt: number | null;
  waitKey: string | null;
}

/** The claim that writes: a step's write counts only while this attempt still holds the delivery. */
export interface StepFence {
  deliveryId: number;
  attempts: number;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Every step a delivery has stored, by id. */
export async function readSteps(db: Queryable, deliveryId: number): Promise<Map<string, StoredStep>> {
  const rows = await db.query<{
    step_id: string;
    seq: number;
    status: StoredStep['status'];
    result_json: string | null;
    attempts: number;
    wake_at: Date | string | null;
    matched_event_id: number | string | null;
  }>(`SELECT step_id, seq, status, result::text AS result_json, attempts, wake_at, matched_event_id FROM hookrun.delivery_steps WHERE delivery_id = $1`, [
    deliveryId,
  ]);
  return new Map(
    rows.map((r) => [
      r.step_id,
      {
        stepId: r.step_id,
        seq: Number(r.seq),
        status: r.status,
        result: r.result_json === null ? undefined : (JSON.parse(r.result_json) as unknown), // as text: a stored string is not parsed twice
        attempts: Number(r.attempts),
        wakeAt: r.wake_at === null ? null : new Date(r.wake_at).getTime(),
        matchedEventId: r.matched_event_id === null ? null : Number(r.matched_event_id),
      },
    ]),
  );
}

/**
 * Write a step's end in one statement, fenced like the settle: only while
 * the delivery is `running` under this attempt (the row is share-locked, so
 * a claim by another worker waits for it or fences it out), and never over a
 * step that already succeeded. False when nothing was written.
 */
export async function writeStep(db: Queryable, fence: StepFence, step: StepWrite): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO hookrun.delivery_steps AS s
       (delivery_id, step_id, seq, status, result, error, attempts, started_at, duration_ms, wake_at, wait_key)
     SELECT d.id, $3, $4, $5, $6::jsonb, $7, $8, $9::timestamptz, $10, $11::timestamptz, $12
     FROM hookrun.handler_deliveries d WHERE d.id = $1 AND d.status = 'running' AND d.attempts = $2
     FOR SHARE OF d
     ON CONFLICT (delivery_id, step_id) DO UPDATE
     SET status = excluded.status, result = excluded.result, error = excluded.error, attempts = excluded.attempts,
         started_at = excluded.started_at, duration_ms = excluded.duration_ms, wake_at = excluded.wake_at,
         wait_key = excluded.wait_key, matched_event_id = NULL
     WHERE s.status <> 'succeeded'
     RETURNING 1 AS written`,
    [
      fence.deliveryId,
      fence.attempts,
      step.stepId,
      step.seq,
      step.status,
      step.resultJson,
      step.error,
      step.attempts,
      iso(step.startedAt),
      Math.round(step.durationMs),
      iso(step.wakeAt),
      step.waitKey,
    ],
  );
  return rows.length > 0;
}
