import { Argument, type Command } from 'commander';
import { MIRROR_TABLES } from '../db/mirror-read.js';
import { withAdminClient } from './admin-client.js';
import { adminAction, positiveInt, printListing, shortTime } from './output.js';
import { loadCliConfig } from './io.js';

const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/;
const cellText = (value: unknown) =>
  value === null || value === undefined ? '-' : typeof value === 'string' && TIME.test(value) ? shortTime(value) : String(value);

/** `hookrun mirror users`: see what the handlers wrote, on any database, while the server runs or not. */
export function registerMirrorCommand(program: Command): void {
  program
    .command('mirror')
    .description('show a mirror table the handlers keep (most recently changed first)')
    .addArgument(new Argument('<table>', 'which mirror').choices(Object.keys(MIRROR_TABLES)))
    .option('--search <text>', 'only rows whose id, email, name or *_id contains this')
    .option('--limit <n>', 'how many rows (1-200)', positiveInt('--limit', 200), 50)
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExamples:\n  hookrun send auth user.created && hookrun mirror users\n  hookrun mirror customers --search example.com --json')
    .action(
      adminAction(async (table: keyof typeof MIRROR_TABLES, flags: { search?: string; limit: number; json?: boolean }) => {
        const params = new URLSearchParams({ limit: String(flags.limit), ...(flags.search ? { search: flags.search } : {}) });
        const { rows } = await withAdminClient(loadCliConfig(), (client) =>
          client.request<{ rows: Array<Record<string, unknown>> }>('GET', `/mirror/${table}?${params}`),
        );
        const columns = MIRROR_TABLES[table].map((name) => ({
          header: name.toUpperCase(),
          cell: (row: Record<string, unknown>) => cellText(row[name]),
          max: 40,
        }));
        printListing(rows, columns, {
          json: flags.json === true,
          jsonValue: { table, rows },
          empty: flags.search ? `No ${table} match "${flags.search}".` : `No ${table} yet. The handlers fill it as events arrive (hookrun send … to try).`,
        });
      }),
    );
}
