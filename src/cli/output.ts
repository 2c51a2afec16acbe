import { InvalidArgumentError } from 'commander';
import { writeOut, writeErr, setExitCode, cliIo } from './io.js';

/** Exit codes scripts can rely on (main.ts maps thrown errors; commands set `process.exitCode` for soft failures). */
export const EXIT_CODES = { ok: 0, failure: 1, usage: 2, config: 78 } as const;

/** A column of a table for people: header, cell text, right-aligned for numbers. */
export interface Column<T> {
  header: string;
  cell: (row: T) => string;
  align?: 'left' | 'right';
  /** Cut longer cells with "…" so one wide value does not wreck the table. */
  max?: number;
}

function fit(text: string, max: number | undefined): string {
  const single = text.replace(/\s+/g, ' ');
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
  writeOut(rows.length === 0 ? `${options.empty}\n` : formatTable(rows, columns));
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
      writeErr(`hookrun: ${(error as Error).message}\n`);
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
