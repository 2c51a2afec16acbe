import type { Logger } from '../log.js';

/** A run keeps at most this many of its last log lines … */
export const MAX_OUTPUT_LINES = 50;
/** … and at most this many characters of them, the newest kept. */
export const MAX_OUTPUT_CHARS = 8 * 1024;

/** A run's `output`: the last lines its job logged through ctx.log, as stored in cron_runs (null: it logged nothing). */
export interface RunOutput {
  output?: string | null;
}

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
type Level = (typeof LEVELS)[number];

/** One log call as a line a person reads: `warn 3 orders skipped {"shop":"acme"}`; errors by message only. */
function lineOf(level: Level, args: unknown[]): string {
  const [first, ...rest] = args;
  const fields = typeof first === 'object' && first !== null ? first : undefined;
  const message = fields ? rest.map(String).join(' ') : args.map(String).join(' ');
  let data = '';
  if (fields instanceof Error) data = fields.message;
  else if (fields) {
    try {
      data = JSON.stringify(fields, (_key, value: unknown) => (value instanceof Error ? value.message : value));
    } catch {
      data = '[unserialisable]';
    }
  }
  return `${level} ${[message, data].filter(Boolean).join(' ')}`.replace(/\r?\n/g, '\\n');
}

/**
 * The logger a job gets: everything goes to hookrun's log as before, and its
 * info, warn and error lines (debug when enabled) are also kept, the last 50 or 8 KB, to be
 * stored with the run (cron_runs.output) and shown by `cron run`, `cron runs`
 * and the dashboard. Children (`ctx.log.child({...})`) share the buffer.
 */
export function captureRunLog(log: Logger): { log: Logger; output(): string | null } {
  const lines: string[] = [];
  let chars = 0;
  const keep = (line: string) => {
    const cut = line.length >= MAX_OUTPUT_CHARS ? `${line.slice(0, MAX_OUTPUT_CHARS - 2)}…` : line;
    lines.push(cut);
    chars += cut.length + 1;
    while (lines.length > MAX_OUTPUT_LINES || chars > MAX_OUTPUT_CHARS) chars -= lines.shift()!.length + 1;
  };
  const wrap = (target: Logger): Logger =>
    new Proxy(target, {
      get(object, property, receiver) {
        const value: unknown = Reflect.get(object, property, receiver);
        if (typeof value !== 'function') return value;
        if (property === 'child') return (...args: Parameters<Logger['child']>) => wrap(object.child(...args) as unknown as Logger);
        if (!(LEVELS as readonly PropertyKey[]).includes(property)) return value;
        const level = property as Level;
        return (...args: unknown[]) => {
          if (LEVELS.indexOf(level) >= LEVELS.indexOf('info') || object.isLevelEnabled(level)) keep(lineOf(level, args));
          return (value as (...a: unknown[]) => unknown).apply(object, args);
        };
      },
    });
  return { log: wrap(log), output: () => (lines.length > 0 ? lines.join('\n') : null) };
}
