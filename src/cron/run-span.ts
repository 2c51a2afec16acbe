import type { Tracer, TraceSpan } from '../telemetry/tracer.js';
import { SPAN_ATTRIBUTES as ATTR } from '../telemetry/tracer.js';
import type { CronTrigger } from './runs-sql.js';

/** A cron run's span (OpenTelemetry on): started with the run, its trace named in an HTTP target's `traceparent`. */
export function startRunSpan(
  tracer: Tracer | undefined,
  run: { id: number; job: string; trigger: CronTrigger; scheduledFor: Date | null; attempt: number },
): TraceSpan | undefined {
  return tracer?.startSpan(`cron ${run.job}`, 'internal', {
    [ATTR.cronJob]: run.job,
    [ATTR.cronTrigger]: run.trigger,
    [ATTR.cronRunId]: run.id,
    [ATTR.scheduledFor]: run.scheduledFor?.toISOString(),
    [ATTR.attempt]: run.attempt,
  });
}

/** End a run's span with its outcome: `succeeded`, or `failed` with the run's error. */
export function endRunSpan(span: TraceSpan | undefined, error: string | null): void {
  if (!span) return;
  span.setAttributes({ [ATTR.outcome]: error === null ? 'succeeded' : 'failed' });
  span.end(error === null ? undefined : Object.assign(new Error(error), { code: 'failed' }));
}
