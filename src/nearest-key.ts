/** The known key within 3 edits of `key` (case ignored), nearest first; undefined when none is that close. */
export function nearestKey(key: string, known: readonly string[]): string | undefined {
  const distance = (a: string, b: string): number => {
    let row = Array.from({ length: b.length + 1 }, (_, i) => i);
    for (let i = 1; i <= a.length; i++) {
      const next = [i];
      for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      row = next;
    }
    return row[b.length]!;
  };
  const scored = known
    .map((k) => [k, distance(key.toLowerCase(), k)] as const)
    .filter(([, d]) => d <= 3)
    .sort((x, y) => x[1] - y[1]);
  return scored[0]?.[0];
}
