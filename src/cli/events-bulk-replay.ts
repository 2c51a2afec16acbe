import { hostname, userInfo } from 'node:os';
import type { Command } from 'commander';
import type { ReplayPlan } from '../replay/plan.js';
import { withAdminClient, type AdminClient } from './admin-client.js';
import { adminAction, EXIT_CODES, positiveInt, printJson, printListing, ProgressBar, say, shortTime, warn } from './output.js';
import { setExitCode, loadCliConfig } from './io.js';

/** The bulk forms of `hookrun events replay`: a selection, which handler, how fast, and whether to wait. */
export interface BulkReplayFlags {
  status?: string;
  source?: string;
  type?: string;
  where?: string;
  from?: string;
  to?: string;
  handler?: string;
  /** One event only: run every step again. */
  fromStart?: boolean;
  rate?: number;
  dryRun?: boolean;
  wait: boolean;
  json?: boolean;
}

/** A bulk replay as the admin API answers it (dates as ISO strings). */
interface ReplayJson {
  id: number;
  createdAt: string;
  actor: string;
  description: string;
  handler: string | null;
  rate: number;
  total: number;
  replayed: number;
  status: 'running' | 'done' | 'cancelled';
}

/** What the command says of itself after the signed-in name (`alice via cli (cli:<os user>@<host>)`): `cli:<os user>@<host>`. */
export function cliActor(): string {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no passwd entry (a container's uid): keep "unknown"
  }
  return `cli:${user}@${hostname()}`.slice(0, 100);
}

function planLines(plan: ReplayPlan, description: string): string {
  const lines = [`would replay ${plan.replayable} of ${plan.matched} event(s) matching ${description} (ids up to ${plan.maxEventId})`];
  for (const skip of plan.skipped) lines.push(`  skipped ${skip.count}: ${skip.text}`);
  lines.push(plan.handlersFrom === 'registry' ? 'handlers that would run:' : "handlers (from these events' history):");
  for (const h of plan.handlers) lines.push(`  ${h.name.padEnd(30)} ${h.events}`);
  if (plan.handlers.length === 0) lines.push('  none');
  return lines.join('\n') + '\n';
}

/** Poll the batch (advancing it here when this command opened the database itself) until it ends. */
async function follow(client: AdminClient, replay: ReplayJson): Promise<ReplayJson> {
  const bar = new ProgressBar(`replay ${replay.id}`, replay.total);
  let current = replay;
  while (current.status === 'running') {
    await client.advanceReplays?.();
    current = (await client.request<{ replay: ReplayJson }>('GET', `/replays/${replay.id}`)).replay;
    bar.update(current.replayed);
    if (current.status === 'running') await new Promise((resolve) => setTimeout(resolve, 250));
  }
  bar.finish();
  return current;
}

/**
 * `hookrun events replay --status dead …`: a bulk replay through the admin
 * API (a dry run with --dry-run), then its progress until it ends (unless
 * --no-wait). Exit 1 when it was cancelled before the end.
 */
export async function runBulkReplay(flags: BulkReplayFlags): Promise<void> {
  const body = {
    status: flags.status,
    source: flags.source,
    type: flags.type,
    where: flags.where,
    from: flags.from,
    to: flags.to,
    handler: flags.handler,
    rate: flags.rate,
    actor: cliActor(),
  };
  await withAdminClient(loadCliConfig(), async (client) => {
    const dry = await client.request<{ plan: ReplayPlan; description: string }>('POST', '/replays', { ...body, dry_run: true });
    if (flags.dryRun) return flags.json ? printJson(dry) : void say(planLines(dry.plan, dry.description));
    if (dry.plan.replayable === 0) {
      if (flags.json) printJson({ replayed: 0, plan: dry.plan });
      else say(`No events to replay: none matches ${dry.description}.\n`);
      return;
    }
    const { replay } = await client.request<{ replay: ReplayJson }>('POST', '/replays', body);
    if (!flags.wait) {
      if (flags.json) return printJson({ replay });
      const note = client.mode === 'local' ? ' (a running hookrun advances it)' : '';
      return void say(`bulk replay ${replay.id} started: ${replay.total} event(s) at ${replay.rate}/s${note}\nfollow: hookrun events replays\n`);
    }
    warn(`bulk replay ${replay.id}: ${replay.total} event(s) matching ${replay.description} at ${replay.rate}/s\n`);
    const ended = await follow(client, replay);
    if (flags.json) printJson({ replay: ended });
    else say(`bulk replay ${ended.id} ${ended.status}: replayed ${ended.replayed} of ${ended.total}\n`);
    if (ended.status !== 'done') setExitCode(EXIT_CODES.failure);
  });
}

/** `hookrun events replays`: bulk replays and their progress, newest first. */
export function registerReplaysCommand(events: Command): void {
  events
    .command('replays')
    .description('bulk replays, newest first: who started what, when, and how far it got')
    .option('--limit <n>', 'how many (max 200)', positiveInt('--limit', 200), 20)
    .option('--json', 'print {"replays": [...], "nextCursor"} as JSON')
    .action(
      adminAction(async (flags: { limit: number; json?: boolean }) => {
        const page = await withAdminClient(loadCliConfig(), (client) =>
          client.request<{ replays: ReplayJson[]; nextCursor: string | null }>('GET', `/replays?limit=${flags.limit}`),
        );
        printListing(
          page.replays,
          [
            { header: 'ID', cell: (r) => String(r.id), align: 'right' },
            { header: 'STARTED (UTC)', cell: (r) => shortTime(r.createdAt) },
            { header: 'BY', cell: (r) => r.actor, max: 40 },
            { header: 'SELECTION', cell: (r) => r.description, max: 50 },
            { header: 'HANDLER', cell: (r) => r.handler ?? 'all' },
            { header: 'DONE', cell: (r) => `${r.replayed}/${r.total}`, align: 'right' },
            { header: 'STATUS', cell: (r) => r.status },
          ],
          { json: flags.json === true, jsonValue: page, empty: 'No bulk replays yet. Start one with: hookrun events replay --status dead' },
        );
      }),
    );
}
