import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapSetter, trace, type Span } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { TelemetrySettings } from '../config/config.js';
import type { Metrics } from '../metrics.js';
import { HOOKRUN_VERSION } from '../version.js';
import { prometheusProducer } from './prometheus-producer.js';
import type { SpanAttributes, SpanKindName, TraceSpan, Tracer } from './tracer.js';

/** The running SDK: its tracer, and the flush that `stop` awaits. */
export interface OtelSdk {
  tracer: Tracer;
  /** Export what is buffered now; never throws. */
  flush(): Promise<void>;
  /** Export what is buffered (spans, a last metric reading) and stop; never throws. */
  shutdown(): Promise<void>;
}

const KINDS: Record<SpanKindName, SpanKind> = { server: SpanKind.SERVER, client: SpanKind.CLIENT, consumer: SpanKind.CONSUMER, internal: SpanKind.INTERNAL };
const propagator = new W3CTraceContextPropagator();

const defined = (attributes: SpanAttributes) =>
  Object.fromEntries(Object.entries(attributes).filter((entry): entry is [string, string | number | boolean] => entry[1] !== undefined));

function wrap(span: Span): TraceSpan {
  return {
    setAttributes: (attributes) => span.setAttributes(defined(attributes)),
    end(error, endTimeMs) {
      if (error !== undefined) {
        const code = (error as { code?: unknown }).code;
        span.setAttribute(ATTR_ERROR_TYPE, typeof code === 'string' ? code : ((error as Error).name ?? 'Error'));
        span.recordException(error instanceof Error ? error : String(error));
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      }
      span.end(endTimeMs);
    },
    traceHeaders() {
      const headers: Record<string, string> = {};
      propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter);
      return headers;
    },
  };
}

/**
 * OpenTelemetry's SDK, set up for hookrun: spans batched to OTLP/HTTP, and the
 * prom-client registry read at each metric export (prometheus-producer.ts).
 * Nothing is registered globally (no global tracer, context manager or
 * propagator), so two services in one process, or a host app's own SDK, do
 * not collide; spans name their parents explicitly.
 */
export function startOtelSdk(settings: TelemetrySettings, metrics: Metrics): OtelSdk {
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, [ATTR_SERVICE_VERSION]: HOOKRUN_VERSION });
  const spanExporter = new OTLPTraceExporter({ url: settings.tracesUrl.href });
  const tracerProvider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(spanExporter)] });
  const reader = new PeriodicExportingMetricReader({
    exporter: new OTLPMetricExporter({ url: settings.metricsUrl.href }),
    exportIntervalMillis: settings.metricIntervalMs,
    exportTimeoutMillis: Math.min(settings.metricIntervalMs, 30_000),
    metricProducers: [prometheusProducer(metrics.registry, Date.now())],
  });
  const meterProvider = new MeterProvider({ resource, readers: [reader] });
  const otelTracer = tracerProvider.getTracer('hookrun', HOOKRUN_VERSION);
  return {
    tracer: {
      startSpan: (name, kind, attributes, startTime) =>
        wrap(otelTracer.startSpan(name, { kind: KINDS[kind], attributes: defined(attributes), startTime }, ROOT_CONTEXT)),
    },
    async flush() {
      await Promise.allSettled([tracerProvider.forceFlush(), meterProvider.forceFlush()]);
    },
    async shutdown() {
      await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}
