import type { AlertDestinationSettings } from '../config/config.js';
import type { AlertRequest } from './deliver.js';
import { pagerDutyRequest } from './pagerduty.js';
import { signedWebhookRequest } from './signed-webhook.js';
import type { Alert } from './alert.js';

/**
 * A place alerts go. Chat (`text`) gets each kind's lines coalesced into one
 * message a window; incident tools (`alert`) get each alert on its own, so a
 * trigger and its resolve meet under one key.
 */
export type AlertDestination =
  | { name: 'slack'; takes: 'text'; request(text: string): AlertRequest }
  | { name: 'pagerduty' | 'webhook'; takes: 'alert'; request(alert: Alert): AlertRequest };

/** A Slack incoming webhook (and Discord's `/slack` endpoint, Mattermost, Google Chat): `POST {"text": …}`. */
export function slackDestination(url: URL, setting: string): AlertDestination {
  return { name: 'slack', takes: 'text', request: (text) => ({ url, setting, body: JSON.stringify({ text }) }) };
}

/** The destinations the settings name, each with its request builder. */
export function alertDestinations(settings: readonly AlertDestinationSettings[]): AlertDestination[] {
  return settings.map((s): AlertDestination => {
    switch (s.type) {
      case 'slack':
        return slackDestination(s.url, s.setting);
      case 'pagerduty':
        return { name: 'pagerduty', takes: 'alert', request: (alert) => pagerDutyRequest(s, alert) };
      case 'webhook':
        return { name: 'webhook', takes: 'alert', request: (alert) => signedWebhookRequest(s, alert) };
    }
  });
}
