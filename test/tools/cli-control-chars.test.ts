import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { formatTable, printable } from '../../src/cli/output.js';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { runCli, seedDataDir } from '../helpers/spawn-hookrun.js';

/** A custom sender's event type that sets the terminal title and clears the screen when printed raw. */
const HOSTILE_TYPE = '\u001b]0;pwned\u0007\u001b[2Jorder.created';
/** Bytes that must never reach the terminal from stored text: ESC, BEL, CSI (C1), CR. */
const RAW_CONTROL = /[\u001b\u0007\u009b\r]/; // eslint-disable-line no-control-regex -- the bytes the test looks for

describe('the CLI prints stored text with its control characters escaped', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-cli-control-'));
  const env = { DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'warn', SCHEDULER: 'off' };

  beforeAll(async () => {
    await ensureDistBuilt();
    await seedDataDir(env.DATA_DIR);
    const db = await openDatabase({ dataDir: env.DATA_DIR });
    await db.query(
      `INSERT INTO hookrun.webhook_events (source, key, type, payload, status, last_error) VALUES ('payments', $1, $2, '{"note":"\\u001b[31m"}'::jsonb, 'failed', $3)`,
      ['evt_\u001b[1mkey', HOSTILE_TYPE, 'boom\r\u009b2Joverwritten\nsecond line'],
    );
    await db.close();
  }, 180_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('events list and events show print no ESC, BEL, CSI or CR byte; --json keeps the exact text', async () => {
    const list = await runCli(['events', 'list'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).not.toMatch(RAW_CONTROL);
    expect(list.stdout).toContain('\\x1b]0;pwned\\x07\\x1b[2Jorder.created');
    expect(list.stdout).toContain('boom\\r\\x9b2Joverwritten\\nsecond line');
    expect(list.stdout.trim().split('\n')).toHaveLength(2); // the header and one row: a stored newline does not break the table

    const show = await runCli(['events', 'show', '1'], env);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).not.toMatch(RAW_CONTROL);
    expect(show.stdout).toContain('payments \\x1b]0;pwned\\x07\\x1b[2Jorder.created');
    expect(show.stdout).toContain('key           evt_\\x1b[1mkey');

    const json = await runCli(['events', 'list', '--json'], env);
    expect((JSON.parse(json.stdout) as { events: Array<{ type: string }> }).events[0]!.type).toBe(HOSTILE_TYPE);
  });

  it('printable escapes C0, C1, DEL and bidi controls; with lines it keeps line feeds and tabs', () => {
    expect(printable('a\u001bb\u0007c\u007fd\u0085e\u202ef\tg\nh')).toBe('a\\x1bb\\x07c\\x7fd\\x85e\\u202ef\\tg\\nh');
    expect(printable('at a\n\tat b\r', { lines: true })).toBe('at a\n\tat b\\r');
    expect(formatTable([{ v: 'x\u001b[2Jy' }], [{ header: 'V', cell: (r) => r.v }])).toBe('V\nx\\x1b[2Jy\n');
  });
});
