import { Option, type Command } from 'commander';
import { FILTER_STATUSES } from '../db/events.js';
import { withAdminClient } from './admin-client.js';
import { cliActor, registerReplaysCommand, runBulkReplay, type BulkReplayFlags } from './events-bulk-replay.js';
import { registerPullCommand } from './pull.js';
import { adminAction, EXIT_CODES, instantOption, positiveInt, printJson, printListing, say, shortTime, warn } from './output.js';
import { deliveryLines, type DeliveryJson } from './event-deliveries.js';
import { loadCliConfig } from './io.js';

/** An event as the admin API lists it (dates as ISO strings). */
interface EventJson {
  id: number;
  source: string;
  key: string;
  type: string;
  status: string;
  attempts: number;
  nextAttemptAt: string;
  lastError: string | null;
  receivedAt: string;
  processedAt: string | null;
  payload?: unknown;
}

interface ListFlags {
  source?: string;
  status?: string;
  type?: string;
  parked?: boolean;
  handler?: string;
  from?: string;
  to?: string;
  where?: string;
  limit: number;
  cursor?: string;
  json?: boolean;
}

const PAGE = 200;

function listPath(filter: Record<string, string | number | true | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(filter)) if (value !== undefined) params.set(key, String(value));
  return `/events?${params}`;
}

/** What an empty listing says: with filters, that nothing matched them; with none, how to send a first event. */
function emptyListMessage(flags: ListFlags): string {
  const filters = [
    flags.parked && 'a parked handler delivery',
    flags.status && `status ${flags.status}`,
    flags.source && `source ${flags.source}`,
    flags.type && `type ${flags.type}`,
    flags.handler && `handler ${flags.handler}`,
    flags.from && `received from ${flags.from}`,
    flags.to && `received before ${flags.to}`,
    flags.where && `payload ${flags.where}`,
  ].filter(Boolean);
  if (flags.cursor) return 'No more events.';
  return filters.length > 0 ? `No events with ${filters.join(', ')}.` : 'No events yet. Send one with: hookrun send auth user.created';
}

const statusOption = () =>
  new Option('--status <status>', "only this status (with --handler: that handler's delivery's, which may also be running, parked or debounced)").choices(
    FILTER_STATUSES,
  );
/** The server checks the source against the project's (shipped routes and platform.json senders), naming them when it is unknown. */
const sourceOption = () => new Option('--source <source>', "only this source: a shipped route (payments, auth, github, …) or a platform.json sender's route");

/** `hookrun events list|show|replay`: see what arrived and what happened to it, and run it again. */
export function registerEventsCommands(program: Command): void {
  const events = program.command('events').description('list stored webhook events, show one, replay them');

  events
    .command('list')
    .description('events, newest first')
    .addOption(sourceOption())
    .addOption(statusOption())
    .option('--type <type>', 'only this event type, e.g. user.created')
    .option('--parked', "only events a handler parked (an order: 'key' handler out of attempts: its key went on without them; replay once fixed)")
    .option('--handler <name>', 'only events with a delivery to this handler (its file name); with --status, the status of that delivery')
    .option('--from <time>', 'received at or after this time (e.g. 2025-01-31T09:00:00Z; without an offset, UTC)', instantOption('--from'))
    .option('--to <time>', 'received before this time (e.g. 2025-01-31; without an offset, UTC)', instantOption('--to'))
    .option('--where <match>', 'a payload value: "path = value" (equals) or "path ~ value" (contains), e.g. "data.object.customer = cus_123"')
    .option('--limit <n>', `how many (max ${PAGE})`, positiveInt('--limit', PAGE), 20)
    .option('--cursor <cursor>', 'continue after a previous page (printed when there is more)')
    .option('--json', 'print {"events": [...], "nextCursor"} as JSON')
    .action(
      adminAction(async (flags: ListFlags) => {
        const page = await withAdminClient(loadCliConfig(), (client) =>
          client.request<{ events: EventJson[]; nextCursor: string | null; searchedTo?: string }>(
            'GET',
            listPath({
              source: flags.source,
              status: flags.status,
              type: flags.type,
              parked: flags.parked === true ? true : undefined,
              handler: flags.handler,
              from: flags.from,
              to: flags.to,
              where: flags.where,
              limit: flags.limit,
              cursor: flags.cursor,
            }),
          ),
        );
        printListing(
          page.events,
          [
            { header: 'ID', cell: (e) => String(e.id), align: 'right' },
            { header: 'RECEIVED (UTC)', cell: (e) => shortTime(e.receivedAt) },
            { header: 'SOURCE', cell: (e) => e.source },
            { header: 'TYPE', cell: (e) => e.type, max: 40 },
            { header: 'STATUS', cell: (e) => e.status },
            { header: 'ATTEMPTS', cell: (e) => String(e.attempts), align: 'right' },
            { header: 'LAST ERROR', cell: (e) => e.lastError ?? '', max: 60 },
          ],
          { json: flags.json === true, jsonValue: page, empty: emptyListMessage(flags) },
        );
        if (!flags.json && page.searchedTo)
          warn(
            `the payload search read events down to id ${page.searchedTo} in its time; narrow it with --from/--to or an id, or go on with --cursor ${page.nextCursor}\n`,
          );
        else if (!flags.json && page.nextCursor) warn(`more: hookrun events list --cursor ${page.nextCursor}\n`);
      }),
    );

  events
    .command('show')
    .description("one event: status, each handler's delivery with its attempts, errors and stacks, and the payload")
    .argument('<id>', 'event id', positiveInt('<id>', Number.MAX_SAFE_INTEGER))
    .option('--json', 'print JSON')
    .action(
      adminAction(async (id: number, flags: { json?: boolean }) => {
        const detail = await withAdminClient(loadCliConfig(), (client) =>
          client.request<{ event: EventJson; deliveries: DeliveryJson[] }>('GET', `/events/${id}`),
        );
        const { event, deliveries } = detail;
        if (flags.json) return printJson({ ...event, deliveries });
        const lines = [
          `event ${event.id}  ${event.source} ${event.type}`,
          `  status        ${event.status}`,
          `  key           ${event.key}`,
          `  received      ${shortTime(event.receivedAt)}`,
          ...(event.status === 'failed' ? [`  next attempt  ${shortTime(event.nextAttemptAt)}`] : []),
          `  processed     ${shortTime(event.processedAt)}`,
          deliveries.length > 0 ? 'deliveries:' : `deliveries: none${event.status === 'ignored' ? ' (no handler takes this type)' : ' yet'}`,
          ...deliveries.flatMap(deliveryLines),
          'payload:',
          JSON.stringify(event.payload, null, 2),
        ];
        say(lines.join('\n') + '\n');
      }),
    );

  registerEventsReplayCommand(events);
}

/** `hookrun events replay`: one event (or one handler of it), or a bulk replay of a selection at a rate. */
function registerEventsReplayCommand(events: Command): void {
  events
    .command('replay')
    .description('put events back in the queue: one by id, or a selection (e.g. --status dead) as a bulk replay at a rate')
    .argument('[id]', 'event id', positiveInt('[id]', Number.MAX_SAFE_INTEGER))
    .addOption(statusOption())
    .addOption(sourceOption())
    .option('--type <type>', 'only this event type')
    .option('--where <match>', 'a payload value: "data.object.customer = cus_123" or "path ~ text"')
    .option('--from <time>', 'received at or after this time (without an offset, UTC)', instantOption('--from'))
    .option('--to <time>', 'received before this time (without an offset, UTC)', instantOption('--to'))
    .option('--handler <name>', "run only this handler again (its file name), not the events' others")
    .option('--from-start', 'one event: run every step again (by default, steps that succeeded keep their results)')
    .option('--rate <n>', 'bulk: events put back per second (1-1000, default 10)', positiveInt('--rate', 1000))
    .option('--dry-run', 'bulk: only say how many would be replayed, which are skipped and which handlers run')
    .option('--no-wait', 'bulk: print the replay id instead of following its progress')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  hookrun events replay 42\n  hookrun events replay 42 --handler send-welcome-email\n  hookrun events replay --status dead --source payments --dry-run\n  hookrun events replay --status dead --where "data.object.customer = cus_123" --rate 50\n  hookrun events replays\n\nExit codes: 0 replayed, 1 not (unknown id, being processed, bulk replay cancelled), 2 usage.',
    )
    .action(
      adminAction(async (id: number | undefined, flags: BulkReplayFlags, command: Command) => {
        const bulk = [flags.status, flags.source, flags.type, flags.where, flags.from, flags.to].some((v) => v !== undefined);
        if ((id === undefined) === !bulk)
          command.error('Give an event id or a selection (--status, --source, --type, --where, --from, --to), not both.', { exitCode: EXIT_CODES.usage });
        if (bulk && flags.fromStart) command.error('--from-start is for one event id, not a selection.', { exitCode: EXIT_CODES.usage });
        if (bulk) return runBulkReplay(flags);
        if (flags.dryRun || flags.rate !== undefined) command.error('--dry-run and --rate are for a selection, not one id.', { exitCode: EXIT_CODES.usage });
        await withAdminClient(loadCliConfig(), async (client) => {
          const query = new URLSearchParams({
            actor: cliActor(),
            ...(flags.handler === undefined ? {} : { handler: flags.handler }),
            ...(flags.fromStart ? { fromStart: 'true' } : {}),
          });
          const { event } = await client.request<{ event: EventJson }>('POST', `/events/${id}/replay?${query}`);
          if (flags.json) printJson({ replayed: 1, event });
          else say(`event ${id} replayed: ${event.status}, attempts ${event.attempts}\n`);
        });
      }),
    );

  registerReplaysCommand(events);
  registerPullCommand(events);
}
