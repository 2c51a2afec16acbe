import type { Command } from 'commander';
import type { Issue } from '../issues/issue-types.js';
import { withAdminClient } from './admin-client.js';
import { adminAction, printJson, printListing, say, shortTime } from './output.js';
import { loadCliConfig } from './io.js';

const STATUSES = ['open', 'acknowledged', 'resolved'];

/** `hookrun issues list|ack|resolve`: the failures grouped into issues, acknowledged or resolved from a terminal. */
export function registerIssuesCommands(program: Command): void {
  const issues = program.command('issues').description('repeated failures grouped into issues (open, acknowledged, resolved); acknowledge or resolve one');

  issues
    .command('list')
    .description('issues of a status, most recently seen first')
    .option('--status <status>', `one of ${STATUSES.join(', ')}`, 'open')
    .option('--json', 'print JSON')
    .action(
      adminAction(async (flags: { status: string; json?: boolean }) => {
        const query = new URLSearchParams({ status: flags.status });
        const { issues: rows } = await withAdminClient(loadCliConfig(), (client) => client.request<{ issues: Issue[] }>('GET', `/issues?${query}`));
        printListing(
          rows,
          [
            { header: 'ID', cell: (i) => String(i.id), align: 'right' },
            { header: 'KIND', cell: (i) => i.kind },
            { header: 'TITLE', cell: (i) => i.title, max: 70 },
            { header: 'COUNT', cell: (i) => String(i.occurrences), align: 'right' },
            { header: 'FIRST SEEN', cell: (i) => shortTime(i.firstSeenAt) },
            { header: 'LAST SEEN', cell: (i) => shortTime(i.lastSeenAt) },
          ],
          { json: flags.json === true, jsonValue: rows, empty: `No ${flags.status} issues.` },
        );
      }),
    );

  const change = (verb: 'ack' | 'resolve', path: string, done: (issue: Issue) => string) =>
    issues
      .command(verb)
      .description(
        verb === 'ack' ? 'acknowledge an open issue: no more notifications until it is resolved and recurs' : 'resolve an issue (it reopens if it recurs)',
      )
      .argument('<id>', 'issue id (hookrun issues list)')
      .option('--json', 'print JSON')
      .action(
        adminAction(async (id: string, flags: { json?: boolean }) => {
          const { issue } = await withAdminClient(loadCliConfig(), (client) =>
            client.request<{ issue: Issue }>('POST', `/issues/${encodeURIComponent(id)}/${path}`, {}),
          );
          if (flags.json) return printJson(issue);
          say(`${done(issue)}\n`);
        }),
      );
  change(
    'ack',
    'acknowledge',
    (i) => `Issue ${i.id} acknowledged: ${i.title} (${i.occurrences} so far). No more notifications until it is resolved and recurs.`,
  );
  change('resolve', 'resolve', (i) => `Issue ${i.id} resolved: ${i.title}. It reopens if it recurs.`);
}
