import type { Command } from 'commander';
import type { Alert } from '../alerts/alert.js';
import { alertDestinations } from '../alerts/destination.js';
import { alertHeading, sendAlertRequest } from '../alerts/deliver.js';
import { ConfigError } from '../errors.js';
import { say } from './output.js';
import { loadCliConfig } from './io.js';

const TEST_TIMEOUT_MS = 10_000;

/** `hookrun alert test`: prove each alert destination works before an incident needs it. */
export function registerAlertCommand(program: Command): void {
  const alert = program.command('alert').description('alerts to Slack, PagerDuty or a signed webhook');
  alert
    .command('test')
    .description('send one test alert to each destination that is set and report its answer (PagerDuty: a trigger, then its resolve)')
    .option('--message <text>', 'the text to send', 'test alert: if you can read this, alerts reach you')
    .addHelpText(
      'after',
      '\nExamples:\n  ALERT_SLACK_WEBHOOK_URL=https://hooks.slack.com/services/… hookrun alert test\n\nExit codes: 0 delivered (2xx) everywhere, 1 not delivered, 78 no destination set or a setting invalid.',
    )
    .action(async (flags: { message: string }) => {
      const settings = loadCliConfig().alerts;
      if (!settings)
        throw new ConfigError(
          'No alert destination is set: set ALERT_SLACK_WEBHOOK_URL (a Slack incoming webhook), ALERT_PAGERDUTY_ROUTING_KEY, or ALERT_WEBHOOK_URL (with ALERT_WEBHOOK_SECRET for the signed JSON; without it, any URL that accepts POST {"text": "…"}).',
        );
      for (const destination of alertDestinations(settings.destinations)) {
        if (destination.takes === 'text') {
          const request = destination.request(alertHeading(flags.message));
          await sendAlertRequest(request, TEST_TIMEOUT_MS);
          say(`Test alert delivered: ${request.setting} answered 2xx.\n`);
          continue;
        }
        const base: Omit<Alert, 'action'> = { kind: 'test', key: 'hookrun-test', summary: flags.message, severity: 'info', at: new Date() };
        for (const action of destination.name === 'pagerduty' ? (['trigger', 'resolve'] as const) : (['trigger'] as const)) {
          const request = destination.request({ ...base, action });
          await sendAlertRequest(request, TEST_TIMEOUT_MS);
          say(`Test alert ${action === 'resolve' ? 'resolved' : 'delivered'}: ${request.setting} answered 2xx.\n`);
        }
      }
    });
}
