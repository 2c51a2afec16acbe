import type { Histogram } from 'prom-client';
import type { Metrics } from '../metrics.js';
import { SPAN_ATTRIBUTES as ATTR } from '../telemetry/tracer.js';
import type { ClaimedDelivery, DeliveryOutcome } from './claimed.js';

/**
 * The per-delivery metrics of both runners (the inbox's batches and flow
 * control's units), without an allocation or a label hash per delivery: runs
 * are tallied by handler and outcome and added once per claim, and each
 * (source, outcome) histogram child is looked up once.
 * (prom-client hashes a labels object on every call; per event that was about
 * 1 µs and 400 bytes of garbage.)
 */
export class OutcomeMetrics {
  /** handler → outcome → runs since the last flush. */
  private readonly runCounts = new Map<string, Map<string, number>>();
  /** source → outcome → settled deliveries since the last flush. */
  private readonly settledCounts = new Map<string, Map<string, number>>();
  /** source → outcome → the processing-duration histogram's child. */
  private readonly durations = new Map<string, Map<string, Histogram.Internal<'source' | 'outcome'>>>();

  constructor(private readonly metrics: Metrics) {}

  /**
   * One settled delivery: its processing time now (unless `timed` is false:
   * the later deliveries of a batch handler's one call), its run and its
   * outcome at the next `flush`.
   */
  observe(delivery: ClaimedDelivery, outcome: DeliveryOutcome, timed = true): void {
    tally(this.runCounts, delivery.handler, outcome.status);
    tally(this.settledCounts, delivery.event.source, outcome.status);
    if (timed) this.duration(delivery.event.source, outcome.status).observe(outcome.durationMs / 1000);
    if (this.metrics.tracer) this.trace(delivery, outcome);
  }

  /** The attempt's span (OpenTelemetry on), from its start to its end, with how it ended. */
  private trace(delivery: ClaimedDelivery, outcome: DeliveryOutcome): void {
    const { event } = delivery;
    const span = this.metrics.tracer!.startSpan(
      `handle ${event.source} ${event.type}`,
      'consumer',
      {
        [ATTR.eventId]: event.id,
        [ATTR.eventSource]: event.source,
        [ATTR.eventType]: event.type,
        [ATTR.eventKey]: event.key,
        [ATTR.handler]: delivery.handler,
        [ATTR.attempt]: delivery.attempts,
        [ATTR.outcome]: outcome.status,
      },
      outcome.startedAt,
    );
    const error = outcome.status === 'processed' ? undefined : Object.assign(new Error(outcome.error ?? outcome.status), { code: outcome.status });
    span.end(error, outcome.startedAt + outcome.durationMs);
  }

  /** Add the tallied handler runs to `hookrun_handler_runs_total` and the outcomes to `hookrun_events_processed_total`. */
  flush(): void {
    for (const [handler, byOutcome] of this.runCounts) {
      for (const [outcome, n] of byOutcome) if (n > 0) this.metrics.handlerRuns.inc({ handler, outcome }, n);
      byOutcome.clear();
    }
    for (const [source, byOutcome] of this.settledCounts) {
      for (const [outcome, n] of byOutcome) if (n > 0) this.metrics.eventsProcessed.inc({ source, outcome }, n);
      byOutcome.clear();
    }
  }

  private duration(source: string, outcome: string): Histogram.Internal<'source' | 'outcome'> {
    let byOutcome = this.durations.get(source);
    if (!byOutcome) this.durations.set(source, (byOutcome = new Map()));
    let child = byOutcome.get(outcome);
    if (!child) byOutcome.set(outcome, (child = this.metrics.processingDuration.labels({ source, outcome })));
    return child;
  }
}

function tally(counts: Map<string, Map<string, number>>, key: string, outcome: string): void {
  let byOutcome = counts.get(key);
  if (!byOutcome) counts.set(key, (byOutcome = new Map()));
  byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
}
