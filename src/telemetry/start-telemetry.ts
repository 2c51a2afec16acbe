import type { TelemetrySettings } from '../config/config.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';

/** What a running service holds of OpenTelemetry: only the flush its stop awaits (the tracer rides on `Metrics.tracer`). */
export interface Telemetry {
  /** Export what is buffered now (spans, a metric reading): inside a serverless function, before it is frozen. Never throws. */
  flush(): Promise<void>;
  /** Export what is buffered and stop; bounded by the exporters' own time-outs, never throws. */
  shutdown(): Promise<void>;
}

/**
 * Turn OpenTelemetry on for this service when OTEL_EXPORTER_OTLP_ENDPOINT is
 * set: the SDK (otel-sdk.ts and its ~100 modules) is imported here and only
 * here, and its tracer is hung on `metrics.tracer`, which every capability
 * already holds. Unset, nothing is loaded and undefined is returned.
 */
export async function startTelemetry(settings: TelemetrySettings | undefined, metrics: Metrics, log: Logger): Promise<Telemetry | undefined> {
  if (!settings) return undefined;
  const { startOtelSdk } = await import('./otel-sdk.js');
  const sdk = startOtelSdk(settings, metrics);
  metrics.tracer = sdk.tracer;
  log.info({ traces: settings.tracesUrl.origin, service: settings.serviceName }, 'OpenTelemetry on: traces and metrics go to the OTLP endpoint');
  return {
    flush: () => sdk.flush(),
    async shutdown() {
      metrics.tracer = undefined;
      await sdk.shutdown();
    },
  };
}
