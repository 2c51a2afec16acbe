import { InvalidArgumentError } from 'commander';
import { readInstant, INSTANT_HINT } from '../time/instant.js';
import { writeOut, writeErr, setExitCode, cliIo } from './io.js';

/** Exit codes scripts can rely on (cli/run.ts maps thrown errors; commands set a soft failure with setExitCode). */
export const EXIT_CODES = { ok: 0, failure: 1, usage: 2, config: 78 } as const;

/** A column of a table for people: header, cell text, right-aligned for numbers. */
export interface Column<T> {
  header: string;
  cell: (row: T) => string;
  align?: 'left' | 'right';
  /** Cut longer cells with "…" so one wide value does not wreck the table. */
  max?: number;
}

/** C0 controls, DEL, C1 controls (CSI is U+009B), and the line and bidi controls that reorder or break what a terminal shows. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g; // eslint-disable-line no-control-regex -- matching them is the point

/** Each control character as visible text (`\x1b`, `\n`, `\u202e`), so stored text cannot drive the terminal. */
function escapeControl(char: string): string {
  const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
  const code = char.charCodeAt(0);
  return named[char] ?? (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
}

/**
 * Text from the database or a sender, made safe to print on a terminal:
 * every control character (ESC, BEL, CR, LF, tab, C1…) shown escaped. With
 * `lines`, line feeds and tabs are kept (a stack trace, a multi-line report).
 */
export function printable(text: string, options: { lines?: boolean } = {}): string {
  return text.replace(CONTROL, (char) => (options.lines && (char === '\n' || char === '\t') ? char : escapeControl(char)));
}

/** Print human output on stdout, control characters escaped (use printJson for `--json`: JSON escapes them itself). */
export function say(text: string): void {
  writeOut(printable(text, { lines: true }));
}

/** Print a human message on stderr, control characters escaped. */
export function warn(text: string): void {
  writeErr(printable(text, { lines: true }));
}

function fit(text: string, max: number | undefined): string {
  const single = printable(text).replace(/ +/g, ' ');
  return max !== undefined && single.length > max ? `${single.slice(0, max - 1)}…` : single;
}

/** Render rows as an aligned plain-text table (no colours, so it pipes cleanly). */
export function formatTable<T>(rows: T[], columns: Column<T>[]): string {
  const cells = rows.map((row) => columns.map((column) => fit(column.cell(row), column.max)));
  const widths = columns.map((column, i) => Math.max(column.header.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((value, i) => (columns[i]!.align === 'right' ? value.padStart(widths[i]!) : value.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join('\n') + '\n';
}

/** Print a listing: JSON for scripts (`--json`), a table for people, a short note when there is nothing. */
export function printListing<T>(rows: T[], columns: Column<T>[], options: { json: boolean; jsonValue?: unknown; empty: string }): void {
  if (options.json) {
    writeOut(JSON.stringify(options.jsonValue ?? rows, null, 2) + '\n');
    return;
  }
  say(rows.length === 0 ? `${options.empty}\n` : formatTable(rows, columns));
}

/** Print any value as indented JSON on stdout. */
export function printJson(value: unknown): void {
  writeOut(JSON.stringify(value, null, 2) + '\n');
}

/** An ISO time as people read it in a table: `2026-01-02 01:00:00Z`, or `-`. */
export function shortTime(iso: string | null | undefined): string {
  if (!iso) return '-';
  return iso.replace('T', ' ').replace(/\.\d{3}Z$/, 'Z');
}

/**
 * A progress bar on stderr, so stdout stays parseable. Draws in place on a
 * terminal; elsewhere (CI logs, pipes) it prints a line every 10%.
 */
export class ProgressBar {
  private lastDecile = -1;
  private readonly tty = cliIo().stderrIsTTY;

  constructor(
    private readonly label: string,
    private readonly total: number,
  ) {}

  update(done: number): void {
    const fraction = this.total === 0 ? 1 : Math.min(1, done / this.total);
    if (this.tty) {
      const width = 30;
      const filled = Math.round(fraction * width);
      writeErr(`\r${this.label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${this.total}`);
      return;
    }
    const decile = Math.floor(fraction * 10);
    if (decile !== this.lastDecile) {
      this.lastDecile = decile;
      writeErr(`${this.label}: ${done}/${this.total}\n`);
    }
  }

  finish(): void {
    if (this.tty) writeErr('\n');
  }
}

/**
 * Wrap a command action so a failed admin call prints its message and sets a
 * script-friendly exit code (400 → 2 usage, anything else → 1); config
 * errors still reach main.ts (78).
 */
export function adminAction<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (error) {
      const status = (error as { status?: unknown }).status;
      if ((error as Error).name !== 'AdminRequestError' || typeof status !== 'number') throw error;
      warn(`hookrun: ${(error as Error).message}\n`);
      setExitCode(status === 400 ? EXIT_CODES.usage : EXIT_CODES.failure);
    }
  };
}

/** Parse a positive whole-number option; commander reports a bad value as a usage error (exit 2). */
export function positiveInt(name: string, max: number): (value: string) => number {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1 || n > max) throw new InvalidArgumentError(`${name} must be a whole number from 1 to ${max}, not "${value}".`);
    return n;
  };
}

/**
 * Parse a date or time option (`--from`, `--to`) by the one rule of
 * time/instant.ts (without an offset: UTC, never this machine's zone) into
 * the ISO instant the admin API takes; a bad value is a usage error (exit 2).
 */
export function instantOption(name: string): (value: string) => string {
  return (value: string) => {
    const at = readInstant(value);
    if (!at) throw new InvalidArgumentError(`${name} "${value.slice(0, 40)}" is not a date or time: ${INSTANT_HINT}.`);
    return at.toISOString();
  };
}
