/** A span's attributes; an undefined value is left out. */
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** OpenTelemetry's span kinds, as the places that start spans name them. */
export type SpanKindName = 'server' | 'client' | 'consumer' | 'internal';

/** One span, started by `Tracer.startSpan`; ended exactly once. */
export interface TraceSpan {
  setAttributes(attributes: SpanAttributes): void;
  /**
   * Ends the span (at `endTimeMs`, ms epoch, or now): without an error its
   * status is unset (success); with one, status error, `error.type` (the
   * error's `code`, else its name) and the exception recorded.
   */
  end(error?: unknown, endTimeMs?: number): void;
  /** W3C Trace Context headers (`traceparent`, and `tracestate` when there is one) naming this span as the parent of an outgoing request. */
  traceHeaders(): Record<string, string>;
}

/**
 * What the capabilities see of OpenTelemetry: a span started and ended
 * explicitly, never a global context, so a webhook's hot path pays only the
 * null check on `Metrics.tracer` when telemetry is off, and nothing of the
 * SDK is loaded then (telemetry/otel-sdk.ts is imported only when it is on).
 */
export interface Tracer {
  /** A root span, started now or at `startTimeMs` (ms epoch: an attempt reported once it is settled). */
  startSpan(name: string, kind: SpanKindName, attributes: SpanAttributes, startTimeMs?: number): TraceSpan;
}

/**
 * The attributes hookrun's spans carry beyond OpenTelemetry's stable
 * semantic conventions (`http.route`, `http.request.method`,
 * `http.response.status_code`, `url.full`, `error.type`), which have no name
 * for a webhook event, a handler or a cron run.
 */
export const SPAN_ATTRIBUTES = {
  /** The event's row id (`webhook_events.id`): the same on the receive span and every delivery attempt's span. */
  eventId: 'hookrun.event.id',
  eventSource: 'hookrun.event.source',
  eventType: 'hookrun.event.type',
  /** The sender's delivery or event id, the event's idempotency key. */
  eventKey: 'hookrun.event.key',
  /** A receive that found the event already stored. */
  duplicate: 'hookrun.event.duplicate',
  handler: 'hookrun.handler',
  attempt: 'hookrun.delivery.attempt',
  /** accepted, duplicate, rejected (receive); processed, failed, dead, parked (a delivery); succeeded, failed (a cron run). */
  outcome: 'hookrun.outcome',
  cronJob: 'hookrun.cron.job',
  cronTrigger: 'hookrun.cron.trigger',
  cronRunId: 'hookrun.cron.run_id',
  scheduledFor: 'hookrun.cron.scheduled_for',
} as const;
