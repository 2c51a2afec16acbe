const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const PERIOD = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/;

/** The period in milliseconds, or undefined when it does not parse or is not positive. */
export function parsePeriod(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = PERIOD.exec(value.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  return ms > 0 ? ms : undefined;
}
