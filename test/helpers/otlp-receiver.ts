import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An OTLP attribute value as the JSON encoding writes it. */
type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
type KeyValue = { key: string; value: AnyValue };

/** One span as a collector decodes it from OTLP/HTTP JSON: ids in hex, attributes flattened. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean | undefined>;
  status: { code?: number; message?: string };
  resource: Record<string, string | number | boolean | undefined>;
}

/** One metric as decoded: its name, its kind of data and its points' attributes and values. */
export interface ReceivedMetric {
  name: string;
  points: Array<{ attributes: Record<string, string | number | boolean | undefined>; value: unknown }>;
  kind: 'sum' | 'gauge' | 'histogram';
}

const valueOf = (v: AnyValue) => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.doubleValue ?? v.boolValue));
const flatten = (attributes: KeyValue[] = []) => Object.fromEntries(attributes.map(({ key, value }) => [key, valueOf(value)]));
/** JSON OTLP carries ids in hex; accept base64 too, as some encoders write it. */
const hexId = (id: string) => (/^[0-9a-f]+$/i.test(id) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex'));

/** A local stand-in for an OpenTelemetry collector's OTLP/HTTP receiver (JSON), on 127.0.0.1: nothing leaves the machine. */
export interface OtlpReceiver {
  /** The base endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  spans: ReceivedSpan[];
  metrics: ReceivedMetric[];
  /** Paths of every request, in order. */
  paths: string[];
  close(): Promise<void>;
}

type SpansBody = { resourceSpans?: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }> }> };
type MetricsBody = { resourceMetrics?: Array<{ scopeMetrics?: Array<{ metrics?: Array<Record<string, unknown>> }> }> };

function decodeSpans(body: SpansBody): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((rs) =>
    (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((span) => ({
        traceId: hexId(span.traceId as string),
        spanId: hexId(span.spanId as string),
        name: span.name as string,
        kind: span.kind as number,
        attributes: flatten(span.attributes as KeyValue[]),
        status: (span.status ?? {}) as ReceivedSpan['status'],
        resource: flatten(rs.resource?.attributes),
      })),
    ),
  );
}

function decodeMetrics(body: MetricsBody): ReceivedMetric[] {
  return (body.resourceMetrics ?? []).flatMap((rm) =>
    (rm.scopeMetrics ?? []).flatMap((sm) =>
      (sm.metrics ?? []).map((metric) => {
        const kind = (['sum', 'gauge', 'histogram'] as const).find((k) => metric[k] !== undefined)!;
        const points = ((metric[kind] as { dataPoints?: Array<Record<string, unknown>> }).dataPoints ?? []).map((p) => ({
          attributes: flatten(p.attributes as KeyValue[]),
          value:
            kind === 'histogram' ? { count: Number(p.count), bucketCounts: p.bucketCounts, explicitBounds: p.explicitBounds } : (p.asDouble ?? Number(p.asInt)),
        }));
        return { name: metric.name as string, kind, points };
      }),
    ),
  );
}

/** Start the receiver: `/v1/traces` and `/v1/metrics` decoded as the exporter's JSON. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const metrics: ReceivedMetric[] = [];
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      paths.push(req.url ?? '');
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as SpansBody & MetricsBody;
      if (req.url === '/v1/traces') spans.push(...decodeSpans(body));
      if (req.url === '/v1/metrics') metrics.push(...decodeMetrics(body));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    metrics,
    paths,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
