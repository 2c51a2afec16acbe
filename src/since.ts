const DURATION = /^(\d{1,6})\s*(m|h|d|w)$/i;
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/**
 * Read a `--since` option: a duration back from now (`90m`, `12h`, `3d`,
 * `1w`) or an ISO date (`2026-11-20`, `2026-11-20T08:00:00Z`). Throws a
 * message that says what to write; a time in the future is refused.
 */
export function parseSince(text: string, nowMs: number): Date {
  const trimmed = text.trim();
  const duration = DURATION.exec(trimmed);
  const ms = duration ? nowMs - Number(duration[1]) * UNIT_MS[duration[2]!.toLowerCase()]! : /^\d{4}-\d{2}-\d{2}/.test(trimmed) ? Date.parse(trimmed) : NaN;
  if (!Number.isFinite(ms)) throw new Error(`--since "${text}" is not a duration (90m, 12h, 3d, 1w) or an ISO date (2026-11-20, 2026-11-20T08:00:00Z).`);
  if (ms > nowMs) throw new Error(`--since "${text}" is in the future.`);
  return new Date(ms);
}

/** A policy duration: milliseconds, or text like `90m`, `12h`, `3d`, `1w` (job files and platform.json). Throws on anything else. */
export function parseDuration(value: number | string, name: string): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  const match = typeof value === 'string' ? DURATION.exec(value.trim()) : null;
  if (!match) throw new Error(`${name} "${String(value)}" is not a duration: use milliseconds or text like 90m, 12h, 3d, 1w`);
  return Number(match[1]) * UNIT_MS[match[2]!.toLowerCase()]!;
}
