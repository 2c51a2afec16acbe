import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Tracer } from './telemetry/tracer.js';

/**
 * Every Prometheus series hookrun exports, on a registry of its own (so two
 * apps in one test process do not collide). Names follow the Prometheus
 * conventions: `_total` counters, `_seconds` histograms.
 */
export class Metrics {
  readonly registry = new Registry();

  /**
   * OpenTelemetry's tracer while OTEL_EXPORTER_OTLP_ENDPOINT is on
   * (telemetry/start-telemetry.ts sets it), else undefined: every capability
   * already holds Metrics, so a span costs the hot path one null check when off.
   */
  tracer: Tracer | undefined = undefined;

  readonly eventsReceived = new Counter({
    name: 'hookrun_events_received_total',
    help: 'Webhook deliveries by source and outcome (accepted, duplicate, rejected).',
    labelNames: ['source', 'outcome', 'reason'] as const,
    registers: [this.registry],
  });

  readonly suspectedReplays = new Counter({
    name: 'hookrun_suspected_replays_total',
    help: 'Deliveries stored under a new delivery id with a signed body an earlier event of the source had (GitHub, Shopify): stored and handled, and marked with that event.',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });

  readonly requestsRejected = new Counter({
    name: 'hookrun_requests_rejected_total',
    help: 'Requests refused (bad or missing credentials, over a size or budget limit, throttled) by route and reason; only the first few per minute are logged.',
    labelNames: ['route', 'reason'] as const,
    registers: [this.registry],
  });

  readonly eventsProcessed = new Counter({
    name: 'hookrun_events_processed_total',
    help: "Handlers' delivery attempts by source and outcome (processed, failed, dead, parked), and events no handler takes (ignored).",
    labelNames: ['source', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly handlerRuns = new Counter({
    name: 'hookrun_handler_runs_total',
    help: 'Runs of each handler (a project file or a shipped mirror) by outcome (processed, failed, dead, parked): several handlers may take one event.',
    labelNames: ['handler', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly processingDuration = new Histogram({
    name: 'hookrun_event_processing_seconds',
    help: 'Time a handler took for one delivery (a batch: for all its events).',
    labelNames: ['source', 'outcome'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    registers: [this.registry],
  });

  readonly eventsByStatus = new Gauge({
    name: 'hookrun_events',
    help: 'Events in the inbox by status (pending, failed, dead, …), sampled at scrape time.',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly cronRuns = new Counter({
    name: 'hookrun_cron_runs_total',
    help: 'Cron runs by job, trigger and final status.',
    labelNames: ['job', 'trigger', 'status'] as const,
    registers: [this.registry],
  });

  readonly cronLag = new Histogram({
    name: 'hookrun_cron_lag_seconds',
    help: 'Start time minus scheduled time of scheduled cron runs.',
    labelNames: ['job'] as const,
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 30, 60, 300],
    registers: [this.registry],
  });

  readonly tableBytes = new Gauge({
    name: 'hookrun_table_bytes',
    help: 'On-disk size (with indexes) of the tables retention bounds: webhook_events, webhook_event_keys, cron_runs; sampled at scrape time.',
    labelNames: ['table'] as const,
    registers: [this.registry],
  });

  readonly retentionDeleted = new Counter({
    name: 'hookrun_retention_deleted_total',
    help: 'Rows retention deleted: events (their keys kept), dedupe keys, cron runs, audit entries.',
    labelNames: ['table'] as const,
    registers: [this.registry],
  });

  readonly alerts = new Counter({
    name: 'hookrun_alerts_total',
    help: 'Alert messages by destination (slack, pagerduty, webhook), kind and outcome (sent, failed after retries, dropped when the queue was full).',
    labelNames: ['kind', 'outcome', 'destination'] as const,
    registers: [this.registry],
  });

  readonly changesCaptured = new Counter({
    name: 'hookrun_changes_captured_total',
    help: 'Row changes read from the product database WAL and newly stored in the inbox (CHANGES_DATABASE_URL).',
    registers: [this.registry],
  });

  readonly changesConnected = new Gauge({
    name: 'hookrun_changes_connected',
    help: '1 while this instance streams the changes slot; 0 when it stands by or reconnects.',
    registers: [this.registry],
  });

  readonly changesLagBytes = new Gauge({
    name: 'hookrun_changes_lag_bytes',
    help: "WAL written since the slot's confirmed position: what hookrun has not stored yet (read every 5 s).",
    registers: [this.registry],
  });

  readonly changesLagSeconds = new Gauge({
    name: 'hookrun_changes_lag_seconds',
    help: 'Seconds from the commit of the newest captured change to its storing in the inbox (set by the instance that streams).',
    registers: [this.registry],
  });

  readonly changesRetainedWal = new Gauge({
    name: 'hookrun_changes_retained_wal_bytes',
    help: 'WAL the product database keeps for the slot; past CHANGES_MAX_RETAINED_WAL_MB hookrun warns.',
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'hookrun_' });
  }
}
