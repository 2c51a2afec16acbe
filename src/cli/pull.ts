import { Option, type Command } from 'commander';
import { EVENT_STATUSES } from '../db/events.js';
import { parseSince } from '../time/since.js';
import { remoteToken } from './listen.js';
import { EXIT_CODES, printJson, say, warn } from './output.js';
import { deliverLocally, isLoopbackUrl, relayLine, remoteApiBase, type LocalAnswer, type RemoteEvent } from './relay.js';
import { setExitCode, loadCliConfig } from './io.js';

/** The most events one `pull --status` copies: a bounded set, not a sync. */
export const MAX_PULL = 1000;
const PAGE = 200;

interface PullFlags {
  from: string;
  token?: string;
  to?: string;
  status?: string;
  since?: string;
  source?: string;
  type?: string;
  allowRemoteTarget?: boolean;
  json?: boolean;
}

async function remoteGet<T>(base: string, path: string, token: string): Promise<T> {
  const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  if (!response.ok) throw Object.assign(new Error(`${base}${path} answered ${response.status}: ${text.slice(0, 300)}`), { status: response.status });
  return JSON.parse(text) as T;
}

/** Ids of the remote events matching the filter, received since `since`, oldest first (at most MAX_PULL). */
async function matchingIds(base: string, token: string, flags: PullFlags, since: Date): Promise<number[]> {
  const ids: number[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams({
      status: flags.status!,
      limit: String(PAGE),
      ...(flags.source ? { source: flags.source } : {}),
      ...(flags.type ? { type: flags.type } : {}),
      ...(cursor ? { cursor } : {}),
    });
    const page: { events: Array<{ id: number; receivedAt: string }>; nextCursor: string | null } = await remoteGet(base, `/events?${params}`, token);
    for (const e of page.events) {
      if (Date.parse(e.receivedAt) < since.getTime()) return ids.reverse();
      ids.push(e.id);
      if (ids.length >= MAX_PULL) return ids.reverse();
    }
    cursor = page.nextCursor;
  } while (cursor);
  return ids.reverse();
}

/** `hookrun events pull`: copy a deployed hookrun's event (or a bounded set) into this one, re-signed locally. */
export function registerPullCommand(events: Command): void {
  events
    .command('pull')
    .description("copy an event from a deployed hookrun into this one (re-signed with the local secret): replay last night's failure on your laptop")
    .argument('[id]', 'the remote event id')
    .requiredOption('--from <url>', 'the deployed hookrun, e.g. https://api.example.com')
    .option('--token <token>', "the deployed hookrun's ADMIN_TOKEN (default: HOOKRUN_REMOTE_TOKEN)")
    .option('--to <url>', 'the local hookrun (default http://localhost:$PORT)')
    .addOption(new Option('--status <status>', 'instead of an id: every event of this status …').choices(EVENT_STATUSES))
    .option('--since <when>', '… received since then (1h, 2d, or an ISO date; default 24h)')
    .addOption(new Option('--source <source>', "with --status: only this source (a shipped route or a platform.json sender's)"))
    .option('--type <type>', 'with --status: only this event type')
    .option('--allow-remote-target', 'allow a --to that is not on this machine')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `\nExamples:\n  hookrun events pull 4211 --from https://api.example.com\n  hookrun events pull --status dead --since 1h --from https://api.example.com\n\nAt most ${MAX_PULL} events per call. Exit codes: 0 all delivered, 1 some not, 2 usage, 78 no token.`,
    )
    .action(async (id: string | undefined, flags: PullFlags, command: Command) => {
      if ((id === undefined) === (flags.status === undefined)) command.error('Give a remote event id or --status (not both).', { exitCode: EXIT_CODES.usage });
      if (id !== undefined && !/^\d{1,15}$/.test(id)) command.error(`The event id must be a whole number, not "${id}".`, { exitCode: EXIT_CODES.usage });
      const config = loadCliConfig();
      const to = flags.to ?? `http://localhost:${config.port}`;
      if (!isLoopbackUrl(to) && !flags.allowRemoteTarget)
        command.error(`--to ${to} is not on this machine; pass --allow-remote-target if you mean it.`, { exitCode: EXIT_CODES.usage });
      let since = new Date(Date.now() - 86_400_000);
      try {
        if (flags.since) since = parseSince(flags.since, Date.now());
      } catch (error) {
        command.error((error as Error).message, { exitCode: EXIT_CODES.usage });
      }
      const token = remoteToken(flags.token);
      const base = remoteApiBase(flags.from);
      let ids: number[];
      try {
        ids = id !== undefined ? [Number(id)] : await matchingIds(base, token, flags, since);
      } catch (error) {
        warn(`hookrun: ${(error as Error).message}\n`);
        setExitCode((error as { status?: number }).status === 401 ? EXIT_CODES.config : EXIT_CODES.failure);
        return;
      }
      const results: Array<{ event: RemoteEvent; answer: LocalAnswer | { error: string } }> = [];
      for (const remoteId of ids) {
        let event: RemoteEvent;
        try {
          event = (await remoteGet<{ event: RemoteEvent }>(base, `/events/${remoteId}`, token)).event;
        } catch (error) {
          warn(`hookrun: ${(error as Error).message}\n`);
          setExitCode((error as { status?: number }).status === 401 ? EXIT_CODES.config : EXIT_CODES.failure);
          return;
        }
        const answer = await deliverLocally(event, config, to).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
        results.push({ event, answer: answer instanceof Error ? { error: answer.message } : answer });
        if (!flags.json) say(`${relayLine(event, answer)}\n`);
        if (answer instanceof Error || answer.status >= 300) setExitCode(EXIT_CODES.failure);
      }
      if (flags.json)
        printJson({
          pulled: results.length,
          results: results.map((r) => ({ id: r.event.id, source: r.event.source, type: r.event.type, key: r.event.key, answer: r.answer })),
        });
      else if (ids.length === 0) say(`No ${flags.status} events since ${since.toISOString()} on ${flags.from}.\n`);
    });
}
