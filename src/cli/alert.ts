import type { Command } from 'commander';
import { postAlert, alertHeading } from '../alerts/deliver.js';
import { ConfigError } from '../errors.js';
import { say } from './output.js';
import { loadCliConfig } from './io.js';

const TEST_TIMEOUT_MS = 10_000;

/** `hookrun alert test`: prove ALERT_WEBHOOK_URL works before an incident needs it. */
export function registerAlertCommand(program: Command): void {
  const alert = program.command('alert').description('alerts to ALERT_WEBHOOK_URL (Slack-compatible {"text"} webhook)');
  alert
    .command('test')
    .description('send one test message to ALERT_WEBHOOK_URL and report its answer')
    .option('--message <text>', 'the text to send', 'test alert: if you can read this, alerts reach you')
    .addHelpText(
      'after',
      '\nExamples:\n  ALERT_WEBHOOK_URL=https://hooks.slack.com/services/… hookrun alert test\n\nExit codes: 0 delivered (2xx), 1 not delivered, 78 ALERT_WEBHOOK_URL unset or invalid.',
    )
    .action(async (flags: { message: string }) => {
      const settings = loadCliConfig().alerts;
      if (!settings)
        throw new ConfigError(
          'ALERT_WEBHOOK_URL is not set: set it to a Slack incoming webhook (https://hooks.slack.com/services/…) or any URL that accepts POST {"text": "…"}.',
        );
      await postAlert(settings.webhookUrl, alertHeading(flags.message), TEST_TIMEOUT_MS);
      say('Test alert delivered: ALERT_WEBHOOK_URL answered 2xx.\n');
    });
}
