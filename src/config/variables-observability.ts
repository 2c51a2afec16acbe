/**
 * The settings of what hookrun tells the team's tools (alert destinations,
 * OpenTelemetry; observability.ts reads them), in the order configuration.md
 * lists them; spread into ENV_VARIABLES (each entry an `EnvVariable`, written
 * out here so neither file imports the other).
 */
export const OBSERVABILITY_VARIABLES: ReadonlyArray<{ name: string; default: string; description: string; feature: string }> = [
  {
    name: 'ALERT_SLACK_WEBHOOK_URL',
    default: 'unset',
    feature: 'alerts',
    description:
      'a Slack incoming webhook (or any URL that takes `POST {"text": "…"}`): told when an issue opens or clears, and when the changes slot keeps too much WAL; treated as a secret',
  },
  {
    name: 'ALERT_PAGERDUTY_ROUTING_KEY',
    default: 'unset',
    feature: 'alerts',
    description:
      'the Integration Key of a PagerDuty Events API v2 integration: each issue triggers an incident (`dedup_key` `hookrun-issue-<id>`) that is resolved when the issue clears; treated as a secret',
  },
  {
    name: 'ALERT_PAGERDUTY_EVENTS_URL',
    default: '`https://events.pagerduty.com/v2/enqueue`',
    feature: 'alerts',
    description: "where PagerDuty events go: PagerDuty's EU service (`https://events.eu.pagerduty.com/v2/enqueue`), or a local receiver in tests",
  },
  {
    name: 'ALERT_WEBHOOK_URL',
    default: 'unset',
    feature: 'alerts',
    description:
      'with `ALERT_WEBHOOK_SECRET`: the generic destination, sent the documented JSON (`alert.triggered`, `alert.resolved`) signed as Standard Webhooks sign. Without it: a Slack-compatible `{"text"}` webhook, as `ALERT_SLACK_WEBHOOK_URL` (its meaning before the secret existed). Treated as a secret',
  },
  {
    name: 'ALERT_WEBHOOK_SECRET',
    default: 'unset',
    feature: 'alerts',
    description:
      '`whsec_` and at least 24 random bytes in base64: signs each alert to `ALERT_WEBHOOK_URL` (`webhook-id`, `webhook-timestamp`, `webhook-signature`)',
  },
  {
    name: 'ALERT_LATE_TICK_SECONDS',
    default: '`300`',
    feature: 'alerts',
    description: 'a scheduled tick with no run this long after its time is reported late',
  },
  { name: 'ALERT_BACKLOG_SECONDS', default: '`600`', feature: 'alerts', description: 'the oldest due event waiting longer than this is reported' },
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    default: 'unset → off',
    feature: 'OpenTelemetry',
    description:
      "an OpenTelemetry collector's OTLP/HTTP endpoint (`http://localhost:4318`): spans of received webhooks, handler attempts and cron runs go to `<endpoint>/v1/traces`, the `hookrun_*` metrics to `<endpoint>/v1/metrics` (JSON). Unset, the OpenTelemetry SDK is not even loaded",
  },
  {
    name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    default: 'unset → `<endpoint>/v1/traces`',
    feature: 'OpenTelemetry',
    description: 'the traces URL, used as given',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
    default: 'unset → `<endpoint>/v1/metrics`',
    feature: 'OpenTelemetry',
    description: 'the metrics URL, used as given',
  },
  { name: 'OTEL_SERVICE_NAME', default: '`hookrun`', feature: 'OpenTelemetry', description: 'the `service.name` of every span and metric' },
  { name: 'OTEL_METRIC_EXPORT_INTERVAL', default: '`60000`', feature: 'OpenTelemetry', description: 'milliseconds between two metric exports' },
  { name: 'OTEL_SDK_DISABLED', default: 'unset', feature: 'OpenTelemetry', description: '`true` turns OpenTelemetry off whatever the endpoint says' },
];
