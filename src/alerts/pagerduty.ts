import type { AlertDestinationSettings } from '../config/config.js';
import { alertSource, type AlertRequest } from './deliver.js';
import type { Alert } from './alert.js';

/** PagerDuty's summary field holds at most 1,024 characters. */
const MAX_SUMMARY_CHARS = 1024;

/**
 * One PagerDuty Events API v2 event (`POST /v2/enqueue`): a trigger opens or
 * updates the incident of `dedup_key`, a resolve with the same key closes it.
 * https://developer.pagerduty.com/docs/events-api-v2/trigger-events/
 */
export function pagerDutyRequest(settings: Extract<AlertDestinationSettings, { type: 'pagerduty' }>, alert: Alert): AlertRequest {
  const base = { routing_key: settings.routingKey, event_action: alert.action, dedup_key: alert.key };
  const event =
    alert.action === 'resolve'
      ? base
      : {
          ...base,
          payload: {
            summary: alert.summary.slice(0, MAX_SUMMARY_CHARS),
            severity: alert.severity,
            source: alertSource(),
            timestamp: alert.at.toISOString(),
            component: 'hookrun',
            class: alert.kind,
          },
        };
  return { url: settings.eventsUrl, setting: 'ALERT_PAGERDUTY_ROUTING_KEY', body: JSON.stringify(event) };
}
