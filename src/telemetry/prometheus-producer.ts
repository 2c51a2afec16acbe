import { ValueType, type Attributes, type HrTime } from '@opentelemetry/api';
import { millisToHrTime } from '@opentelemetry/core';
import {
  AggregationTemporality,
  DataPointType,
  type CollectionResult,
  type DataPoint,
  type Histogram,
  type MetricData,
  type MetricProducer,
} from '@opentelemetry/sdk-metrics';
import { emptyResource } from '@opentelemetry/resources';
import type { Registry } from 'prom-client';
import { HOOKRUN_VERSION } from '../version.js';

type PromMetric = Awaited<ReturnType<Registry['getMetricsAsJSON']>>[number];
type PromValue = PromMetric['values'][number] & { metricName?: string };
type Labels = Record<string, string | number>;

const attributesOf = (labels: Labels): Attributes => Object.fromEntries(Object.entries(labels).map(([name, value]) => [name, value]));
const seriesKey = (labels: Labels) => JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));

/** prom-client's cumulative `_bucket`, `_sum` and `_count` series of one histogram, as OpenTelemetry's histogram points (counts per bucket, not cumulative). */
function histogramPoints(values: readonly PromValue[], startTime: HrTime, endTime: HrTime): DataPoint<Histogram>[] {
  const series = new Map<string, { labels: Labels; buckets: Array<[number, number]>; sum: number; count: number }>();
  for (const { metricName, labels, value } of values) {
    const { le, ...own } = labels as Labels & { le?: string | number };
    const key = seriesKey(own);
    const entry = series.get(key) ?? { labels: own, buckets: [], sum: 0, count: 0 };
    series.set(key, entry);
    if (metricName?.endsWith('_bucket') && le !== undefined && le !== '+Inf') entry.buckets.push([Number(le), value]);
    else if (metricName?.endsWith('_sum')) entry.sum = value;
    else if (metricName?.endsWith('_count')) entry.count = value;
  }
  return [...series.values()].map(({ labels, buckets, sum, count }) => {
    buckets.sort(([a], [b]) => a - b);
    const cumulative = [...buckets.map(([, n]) => n), count];
    const counts = cumulative.map((n, i) => n - (i === 0 ? 0 : cumulative[i - 1]!));
    return { startTime, endTime, attributes: attributesOf(labels), value: { buckets: { boundaries: buckets.map(([le]) => le), counts }, sum, count } };
  });
}

function toMetricData(metric: PromMetric, startTime: HrTime, endTime: HrTime): MetricData | undefined {
  const descriptor = { name: metric.name, description: metric.help, unit: metric.name.endsWith('_seconds') ? 's' : '', valueType: ValueType.DOUBLE };
  const points = () => metric.values.map(({ labels, value }) => ({ startTime, endTime, attributes: attributesOf(labels as Labels), value }));
  const cumulative = AggregationTemporality.CUMULATIVE;
  switch (String(metric.type)) {
    case 'counter':
      return { descriptor, aggregationTemporality: cumulative, dataPointType: DataPointType.SUM, isMonotonic: true, dataPoints: points() };
    case 'gauge':
      return { descriptor, aggregationTemporality: cumulative, dataPointType: DataPointType.GAUGE, dataPoints: points() };
    case 'histogram':
      return {
        descriptor,
        aggregationTemporality: cumulative,
        dataPointType: DataPointType.HISTOGRAM,
        dataPoints: histogramPoints(metric.values, startTime, endTime),
      };
    default:
      return undefined; // hookrun defines no summaries
  }
}

/**
 * The `hookrun_*` series of `/metrics`, read from the one prom-client
 * registry at each export and handed to the OpenTelemetry SDK's reader as
 * they are: every number is counted once, in src/metrics.ts, and reaches
 * Prometheus and OTLP alike (counters as cumulative monotonic sums, gauges,
 * histograms with the same buckets).
 */
export function prometheusProducer(registry: Registry, startedAtMs: number): MetricProducer {
  const startTime = millisToHrTime(startedAtMs);
  return {
    async collect(): Promise<CollectionResult> {
      const endTime = millisToHrTime(Date.now());
      const metrics = (await registry.getMetricsAsJSON())
        .map((metric) => toMetricData(metric, startTime, endTime))
        .filter((metric): metric is MetricData => metric !== undefined && metric.dataPoints.length > 0);
      return { resourceMetrics: { resource: emptyResource(), scopeMetrics: [{ scope: { name: 'hookrun', version: HOOKRUN_VERSION }, metrics }] }, errors: [] };
    },
  };
}
