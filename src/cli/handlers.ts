import type { Command } from 'commander';
import { NO_FLOW } from '../flow/describe.js';
import { waitingSummary, type HandlerOverview, type HandlerPauseState } from '../inbox/handler-overview.js';
import { withAdminClient } from './admin-client.js';
import { adminAction, printJson, printListing, say, shortTime } from './output.js';
import { loadCliConfig } from './io.js';

/** A handler as the admin API answers it (dates as ISO strings). */
type HandlerJson = Omit<HandlerOverview, 'pausedAt'> & { pausedAt: string | null };

const handlerPath = (name: string) => `/handlers/${encodeURIComponent(name)}`;

/** `hookrun handlers list|pause|resume`: see why a handler's deliveries wait, and hold a handler without a redeploy. */
export function registerHandlersCommands(program: Command): void {
  const handlers = program.command('handlers').description('list handlers with their flow options and what their deliveries wait for; pause and resume one');

  handlers
    .command('list')
    .description(
      'every handler: flow options, paused, running, waiting by reason (ready, concurrency, rate, debounce, batch, paused), failed (will retry), parked, dead',
    )
    .option('--json', 'print JSON (with the top 5 waiting keys of each handler)')
    .action(
      adminAction(async (flags: { json?: boolean }) => {
        const { handlers: rows } = await withAdminClient(loadCliConfig(), (client) => client.request<{ handlers: HandlerJson[] }>('GET', '/handlers'));
        printListing(
          rows,
          [
            { header: 'HANDLER', cell: (h) => (h.registered ? h.name : `${h.name} (not loaded)`) },
            { header: 'FLOW', cell: (h) => h.flow ?? NO_FLOW, max: 60 },
            { header: 'PAUSED', cell: (h) => (h.paused ? `since ${shortTime(h.pausedAt)}` : '-') },
            { header: 'RUNNING', cell: (h) => String(h.running), align: 'right' },
            { header: 'WAITING', cell: (h) => waitingSummary(h.waiting) },
            { header: 'FAILED', cell: (h) => String(h.failed), align: 'right' },
            { header: 'PARKED', cell: (h) => String(h.parked), align: 'right' },
            { header: 'DEAD', cell: (h) => String(h.dead), align: 'right' },
          ],
          { json: flags.json === true, jsonValue: rows, empty: 'No handlers (add a file to handlers/ in your project).' },
        );
        if (!flags.json && rows.some((h) => h.parked > 0)) say('Parked events: hookrun events list --parked (fix the cause, then replay them).\n');
      }),
    );

  handlers
    .command('pause')
    .description('pause a handler on every instance: its deliveries wait (none starts) until resumed, also across restarts')
    .argument('<name>', 'handler name (its file name in handlers/)')
    .option('--json', 'print JSON')
    .action(
      adminAction(async (name: string, flags: { json?: boolean }) => {
        const state = await withAdminClient(loadCliConfig(), (client) => client.request<HandlerPauseState>('POST', `${handlerPath(name)}/pause`, {}));
        if (flags.json) return printJson(state);
        say(`${name} ${state.changed ? 'paused' : 'was already paused'}: its deliveries wait on every instance until \`hookrun handlers resume ${name}\`.\n`);
      }),
    );

  handlers
    .command('resume')
    .description('resume a paused handler: its waiting deliveries start in their order, within its limits')
    .argument('<name>', 'handler name')
    .option('--json', 'print JSON')
    .action(
      adminAction(async (name: string, flags: { json?: boolean }) => {
        const state = await withAdminClient(loadCliConfig(), (client) => client.request<HandlerPauseState>('POST', `${handlerPath(name)}/resume`, {}));
        if (flags.json) return printJson(state);
        say(state.changed ? `${name} resumed: its waiting deliveries start now, within its limits.\n` : `${name} was not paused.\n`);
      }),
    );
}
