const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)$/i;

/** What every duration message tells a person to write instead (docs/configuration.md#durations). */
export const DURATION_HINT = "write milliseconds (a number) or a number and a unit, like '500ms', '30s', '5m', '1h', '1d' or '1w'";

const shown = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value)));

/** A duration that does not read: its message names the setting, what was written and what to write. */
export class DurationError extends Error {
  readonly code = 'invalid_duration';
  constructor(name: string, value: unknown, problem = 'is not a duration') {
    super(`${name} ${shown(value)} ${problem}: ${DURATION_HINT}.`);
    this.name = 'DurationError';
  }
}

/**
 * The one duration grammar (flow options, platform.json, job files, `--since`):
 * a number of milliseconds, or a number and a unit `ms`, `s`, `m`, `h`, `d`,
 * `w` (`'500ms'`, `'1.5s'`, `'30s'`, `'5m'`, `'12h'`, `'3d'`, `'1w'`; any
 * case, a space allowed before the unit). Undefined when it does not read.
 */
export function readDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = DURATION.exec(value.trim());
  if (!match) return undefined;
  return Number(match[1]) * UNIT_MS[match[2]!.toLowerCase() as keyof typeof UNIT_MS];
}

/** A setting's duration in ms, or a DurationError naming it; zero only where it means "none" (`zero: true`). */
export function parseDuration(value: unknown, name: string, options: { zero?: boolean } = {}): number {
  const ms = readDuration(value);
  if (ms === undefined) throw new DurationError(name, value);
  if (ms === 0 && !options.zero) throw new DurationError(name, value, 'must be longer than zero');
  return ms;
}
