import { InvalidArgumentError, Option, type Command } from 'commander';
import { loadConfig } from '../config.js';
import { SOURCES } from '../webhooks/providers/index.js';
import { EVENT_STATUSES } from '../db/events.js';
import { AdminRequestError, withAdminClient, type AdminClient } from './admin-client.js';
import { registerPullCommand } from './pull.js';
import { adminAction, EXIT_CODES, positiveInt, printJson, printListing, ProgressBar, shortTime } from './output.js';

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

/** Every id matching a replay filter, collected first so the progress bar knows the total. */
async function matchingIds(client: AdminClient, filter: { status: string; source?: string; type?: string }): Promise<number[]> {
  const ids: number[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.request<{ events: EventJson[]; nextCursor: string | null }>('GET', listPath({ ...filter, limit: PAGE, cursor }));
    ids.push(...page.events.map((e) => e.id));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return ids;
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

/** A time flag as the ISO time the API takes: any date `Date` reads (`2025-01-31`, `2025-01-31T09:00Z`). */
function isoTime(flag: string): (value: string) => string {
  return (value) => {
    const ms = Date.parse(value);
    if (Number.isNaN(ms)) throw new InvalidArgumentError(`${flag} takes a date or an ISO time, e.g. 2025-01-31T09:00:00Z.`);
    return new Date(ms).toISOString();
  };
}

const statusOption = () => new Option('--status <status>', 'only this status').choices(EVENT_STATUSES);
const sourceOption = () => new Option('--source <source>', 'only this source').choices(SOURCES);

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
    .option('--handler <name>', 'only events this handler (its file name) has run or owes a delivery of')
    .option('--from <time>', 'received at or after this time (ISO, e.g. 2025-01-31T09:00:00Z)', isoTime('--from'))
    .option('--to <time>', 'received before this time (ISO)', isoTime('--to'))
    .option('--where <match>', 'a payload value: "path = value" (equals) or "path ~ value" (contains), e.g. "data.object.customer = cus_123"')
    .option('--limit <n>', `how many (max ${PAGE})`, positiveInt('--limit', PAGE), 20)
    .option('--cursor <cursor>', 'continue after a previous page (printed when there is more)')
    .option('--json', 'print {"events": [...], "nextCursor"} as JSON')
    .action(
      adminAction(async (flags: ListFlags) => {
        const page = await withAdminClient(loadConfig(), (client) =>
          client.request<{ events: EventJson[]; nextCursor: string | null }>(
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
        if (!flags.json && page.nextCursor) process.stderr.write(`more: hookrun events list --cursor ${page.nextCursor}\n`);
      }),
    );

  events
    .command('show')
    .description('one event: status, attempts, last error and payload')
    .argument('<id>', 'event id', positiveInt('<id>', Number.MAX_SAFE_INTEGER))
    .option('--json', 'print JSON')
    .action(
      adminAction(async (id: number, flags: { json?: boolean }) => {
        const { event } = await withAdminClient(loadConfig(), (client) => client.request<{ event: EventJson }>('GET', `/events/${id}`));
        if (flags.json) return printJson(event);
        const lines = [
          `event ${event.id}  ${event.source} ${event.type}`,
          `  status        ${event.status}`,
          `  attempts      ${event.attempts}`,
          `  key           ${event.key}`,
          `  received      ${shortTime(event.receivedAt)}`,
          `  next attempt  ${shortTime(event.nextAttemptAt)}`,
          `  processed     ${shortTime(event.processedAt)}`,
          `  last error    ${event.lastError ?? '-'}`,
          'payload:',
          JSON.stringify(event.payload, null, 2),
        ];
        process.stdout.write(lines.join('\n') + '\n');
      }),
    );

  registerEventsReplayCommand(events);
}

/** `hookrun events replay`: one event, one handler of it, or every event of a status, processed again. */
function registerEventsReplayCommand(events: Command): void {
  events
    .command('replay')
    .description('put events back in the queue: one by id, or every event of a status (e.g. --status dead)')
    .argument('[id]', 'event id', positiveInt('[id]', Number.MAX_SAFE_INTEGER))
    .addOption(statusOption())
    .addOption(sourceOption())
    .option('--type <type>', 'with --status: only this event type')
    .option('--handler <name>', "with an id: run only this handler again (its file name), not the event's others")
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  hookrun events replay 42\n  hookrun events replay 42 --handler send-welcome-email\n  hookrun events replay --status dead --source payments\n\nExit codes: 0 all replayed, 1 some could not be (unknown id, being processed), 2 usage.',
    )
    .action(
      adminAction(
        async (id: number | undefined, flags: { status?: string; source?: string; type?: string; handler?: string; json?: boolean }, command: Command) => {
          if ((id === undefined) === (flags.status === undefined)) command.error('Give an event id or --status (not both).', { exitCode: EXIT_CODES.usage });
          if (flags.handler !== undefined && id === undefined) command.error('--handler replays one event: give its id.', { exitCode: EXIT_CODES.usage });
          if (flags.status === 'processing')
            command.error('--status processing cannot be replayed: a worker owns those events.', { exitCode: EXIT_CODES.usage });
          await withAdminClient(loadConfig(), async (client) => {
            if (id !== undefined) {
              const query = flags.handler === undefined ? '' : `?handler=${encodeURIComponent(flags.handler)}`;
              const { event } = await client.request<{ event: EventJson }>('POST', `/events/${id}/replay${query}`);
              if (flags.json) printJson({ replayed: 1, event });
              else process.stdout.write(`event ${id} replayed: ${event.status}, attempts ${event.attempts}\n`);
              return;
            }
            const ids = await matchingIds(client, { status: flags.status!, source: flags.source, type: flags.type });
            const bar = new ProgressBar('replaying', ids.length);
            const failed: Array<{ id: number; message: string }> = [];
            for (const [index, eventId] of ids.entries()) {
              try {
                await client.request('POST', `/events/${eventId}/replay`);
              } catch (error) {
                if (!(error instanceof AdminRequestError) || error.status === 0) throw error;
                failed.push({ id: eventId, message: error.message });
              }
              if (ids.length > 1) bar.update(index + 1);
            }
            if (ids.length > 1) bar.finish();
            if (flags.json) printJson({ replayed: ids.length - failed.length, failed });
            else
              process.stdout.write(
                `replayed ${ids.length - failed.length} of ${ids.length} ${flags.status} event(s)\n${failed.map((f) => `  ${f.id}: ${f.message}`).join('\n')}${failed.length ? '\n' : ''}`,
              );
            if (failed.length > 0) process.exitCode = EXIT_CODES.failure;
          });
        },
      ),
    );

  registerPullCommand(events);
}
