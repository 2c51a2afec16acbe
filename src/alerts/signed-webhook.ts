import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { AlertDestinationSettings } from '../config/config.js';
import { alertSource, type AlertRequest } from './deliver.js';
import type { Alert } from './alert.js';

/**
 * The generic destination's body (docs/operations.md#alerts documents it), in
 * Standard Webhooks' recommended shape `{type, timestamp, data}`.
 */
export function alertPayload(alert: Alert): string {
  return JSON.stringify({
    type: alert.action === 'trigger' ? 'alert.triggered' : 'alert.resolved',
    timestamp: alert.at.toISOString(),
    data: { key: alert.key, kind: alert.kind, severity: alert.severity, summary: alert.summary, source: alertSource() },
  });
}

/**
 * One alert to ALERT_WEBHOOK_URL, signed with ALERT_WEBHOOK_SECRET as
 * Standard Webhooks sign (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature: v1,<HMAC-SHA256>`), so a receiver verifies it with the
 * standardwebhooks library (or Svix's) and rejects replays by id and time.
 * https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
 */
export function signedWebhookRequest(settings: Extract<AlertDestinationSettings, { type: 'webhook' }>, alert: Alert): AlertRequest {
  const body = alertPayload(alert);
  const id = `msg_${randomUUID()}`;
  const sentAt = new Date();
  const signature = new Webhook(settings.secret).sign(id, sentAt, body);
  const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)), 'webhook-signature': signature };
  return { url: settings.url, setting: 'ALERT_WEBHOOK_URL', headers, body };
}
