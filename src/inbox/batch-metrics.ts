import type { Histogram } from 'prom-client';
import type { ClaimedEvent, Settlement } from '../db/inbox-queue.js';
import type { Metrics } from '../metrics.js';

/**
 * The worker's per-event metrics, without an allocation or a label hash per
 * event: handler runs are tallied by handler and outcome and added once per
 * claim, and each (source, outcome) histogram child is looked up once.
 * (prom-client hashes a labels object on every call; per event that was about
 * 1 µs and 400 bytes of garbage.)
 */
export class BatchMetrics {
  /** handler → outcome → runs since the last flush. */
  private readonly runCounts = new Map<string, Map<string, number>>();
  /** source → outcome → the processing-duration histogram's child. */
  private readonly durations = new Map<string, Map<string, Histogram.Internal<'source' | 'outcome'>>>();

  constructor(private readonly metrics: Metrics) {}

  /** One settled event: its processing time now, its handler runs at the next `flush`. */
  observe(event: ClaimedEvent, settlement: Settlement): void {
    let ms = 0;
    if (settlement.runs) {
      for (const run of settlement.runs) {
        ms += run.durationMs ?? 0;
        this.countRun(run.handler ?? '', run.outcome);
      }
    } else if (settlement.handler !== undefined) {
      ms = settlement.timing?.durationMs ?? 0;
      this.countRun(settlement.handler, settlement.status);
    }
    this.duration(event.source, settlement.status).observe(ms / 1000);
  }

  /** Add the tallied handler runs to `hookrun_handler_runs_total`. */
  flush(): void {
    for (const [handler, byOutcome] of this.runCounts) {
      for (const [outcome, n] of byOutcome) if (n > 0) this.metrics.handlerRuns.inc({ handler, outcome }, n);
      byOutcome.clear();
    }
  }

  private countRun(handler: string, outcome: string): void {
    let byOutcome = this.runCounts.get(handler);
    if (!byOutcome) this.runCounts.set(handler, (byOutcome = new Map()));
    byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
  }

  private duration(source: string, outcome: string): Histogram.Internal<'source' | 'outcome'> {
    let byOutcome = this.durations.get(source);
    if (!byOutcome) this.durations.set(source, (byOutcome = new Map()));
    let child = byOutcome.get(outcome);
    if (!child) byOutcome.set(outcome, (child = this.metrics.processingDuration.labels({ source, outcome })));
    return child;
  }
}
