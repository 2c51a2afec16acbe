import { ConfigError } from '../errors.js';
import { httpUrl, isLoopbackHost, parseSetting, readInt, type Env } from './values.js';

/** One place alerts go; each holds a credential (a Slack URL, a routing key, a signing secret): never log one. */
export type AlertDestinationSettings =
  | { type: 'slack'; setting: 'ALERT_SLACK_WEBHOOK_URL' | 'ALERT_WEBHOOK_URL'; url: URL }
  | { type: 'pagerduty'; routingKey: string; eventsUrl: URL }
  | { type: 'webhook'; url: URL; secret: string };

/** Where alerts go and when a slow queue or a late tick is worth one. */
export interface AlertSettings {
  /** At least one. */
  destinations: AlertDestinationSettings[];
  /** A scheduled tick with no run this long after its time is late. */
  lateTickSeconds: number;
  /** The oldest due event waiting longer than this is a stuck queue. */
  backlogSeconds: number;
}

/** PagerDuty's Events API v2 (its EU service answers at events.eu.pagerduty.com). */
export const PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue';

/** A Standard Webhooks secret: `whsec_` and at least 24 random bytes in base64. */
const SIGNING_SECRET = /^whsec_[A-Za-z0-9+/]{32,}={0,2}$/;

function readUrl(env: Env, name: string, example: string): URL | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  return parseSetting(httpUrl, raw, `${name} is not an http(s) URL: use ${example}, or unset it.`);
}

function readPagerDuty(env: Env): AlertDestinationSettings | undefined {
  const routingKey = env.ALERT_PAGERDUTY_ROUTING_KEY?.trim();
  const eventsUrl = readUrl(env, 'ALERT_PAGERDUTY_EVENTS_URL', PAGERDUTY_EVENTS_URL);
  if (!routingKey) {
    if (eventsUrl) throw new ConfigError('ALERT_PAGERDUTY_EVENTS_URL is set but ALERT_PAGERDUTY_ROUTING_KEY is not: set the integration key or unset the URL.');
    return undefined;
  }
  if (!/^[A-Za-z0-9]{32}$/.test(routingKey))
    throw new ConfigError('ALERT_PAGERDUTY_ROUTING_KEY is not a routing key: use the 32-character Integration Key of an Events API v2 integration.');
  if (eventsUrl?.protocol === 'http:' && !isLoopbackHost(eventsUrl.hostname))
    throw new ConfigError('ALERT_PAGERDUTY_EVENTS_URL: plain http:// only to this machine (the routing key travels with each event); use https://.');
  return { type: 'pagerduty', routingKey, eventsUrl: eventsUrl ?? new URL(PAGERDUTY_EVENTS_URL) };
}

/**
 * `ALERT_WEBHOOK_URL` keeps its first meaning (a Slack-compatible `{"text"}`
 * webhook) unless `ALERT_WEBHOOK_SECRET` is set beside it: then it is the
 * generic destination, the documented JSON signed as Standard Webhooks sign.
 */
function readWebhook(env: Env): AlertDestinationSettings | undefined {
  const url = readUrl(env, 'ALERT_WEBHOOK_URL', 'a URL that accepts POST (https://alerts.example.com/hookrun)');
  const secret = env.ALERT_WEBHOOK_SECRET?.trim();
  if (!secret) return url && { type: 'slack', setting: 'ALERT_WEBHOOK_URL', url };
  if (!url) throw new ConfigError('ALERT_WEBHOOK_SECRET is set but ALERT_WEBHOOK_URL is not: set the URL the signed alerts go to, or unset the secret.');
  if (!SIGNING_SECRET.test(secret))
    throw new ConfigError(
      'ALERT_WEBHOOK_SECRET is not a signing secret: use whsec_ followed by at least 24 random bytes in base64 (echo whsec_$(openssl rand -base64 32)).',
    );
  return { type: 'webhook', url, secret };
}

/** The alert destinations that are set, and the thresholds; undefined when none is set. */
export function readAlerts(env: Env): AlertSettings | undefined {
  const slack = readUrl(env, 'ALERT_SLACK_WEBHOOK_URL', 'a Slack incoming webhook (https://hooks.slack.com/services/…)');
  const destinations = [slack && ({ type: 'slack', setting: 'ALERT_SLACK_WEBHOOK_URL', url: slack } as const), readPagerDuty(env), readWebhook(env)].filter(
    (destination) => destination !== undefined,
  );
  if (destinations.length === 0) return undefined;
  return {
    destinations,
    lateTickSeconds: readInt(env, 'ALERT_LATE_TICK_SECONDS', 300, 1, 86_400),
    backlogSeconds: readInt(env, 'ALERT_BACKLOG_SECONDS', 600, 1, 604_800),
  };
}

/** Where OpenTelemetry traces and metrics go (OTLP over HTTP, JSON), from the standard OTEL_* variables. */
export interface TelemetrySettings {
  tracesUrl: URL;
  metricsUrl: URL;
  /** `service.name` of every span and metric. */
  serviceName: string;
  /** Between two metric exports. */
  metricIntervalMs: number;
}

/** A signal's URL: its own variable as given, or the base endpoint with `v1/<signal>` appended (the OTLP exporter spec's rule). */
function signalUrl(env: Env, base: URL, signal: 'traces' | 'metrics'): URL {
  const name = `OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_ENDPOINT`;
  return (
    readUrl(env, name, `a collector's OTLP/HTTP ${signal} URL (http://localhost:4318/v1/${signal})`) ??
    new URL(`v1/${signal}`, base.href.endsWith('/') ? base : `${base.href}/`)
  );
}

/** `OTEL_EXPORTER_OTLP_ENDPOINT` and its companions; undefined (telemetry off, nothing loaded) when unset or `OTEL_SDK_DISABLED=true`. */
export function readTelemetry(env: Env): TelemetrySettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const base = readUrl(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', "a collector's OTLP/HTTP endpoint (http://localhost:4318)");
  if (!base) return undefined;
  return {
    tracesUrl: signalUrl(env, base, 'traces'),
    metricsUrl: signalUrl(env, base, 'metrics'),
    serviceName: env.OTEL_SERVICE_NAME?.trim() || 'hookrun',
    metricIntervalMs: readInt(env, 'OTEL_METRIC_EXPORT_INTERVAL', 60_000, 100, 86_400_000),
  };
}
