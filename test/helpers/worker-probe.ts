import { withDatabase } from './inspect-db.js';
import { pollUntil } from './poll.js';

const UNSETTLED = ['pending', 'failed'];

/** Parse `hookrun_events{status="…"} n` lines of a Prometheus exposition. */
export function eventsByStatusFromMetrics(text: string): Record<string, number> | undefined {
  const out: Record<string, number> = {};
  let seen = false;
  for (const match of text.matchAll(/^hookrun_events\{status="([a-z]+)"\} (\d+(?:\.\d+)?)$/gm)) {
    out[match[1]!] = Number(match[2]);
    seen = true;
  }
  return seen ? out : undefined;
}

/**
 * Wait (bounded) until every stored event is settled (processed, ignored or
 * dead): PostgreSQL is read directly; an embedded database belongs to the
 * running process, so its `/metrics` inbox gauge is read instead.
 */
export async function waitForInboxSettled(
  baseUrl: string,
  target: { url?: string; dataDir?: string },
  expected: number,
  timeoutMs: number,
): Promise<{ ms: number; byStatus: Record<string, number> }> {
  const started = Date.now();
  let last: Record<string, number> = {};
  const settled = async (): Promise<Record<string, number> | undefined> => {
    if (target.url) {
      last = await withDatabase(target, async (query) =>
        Object.fromEntries(
          (await query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM hookrun.webhook_events GROUP BY status')).map((r) => [
            r.status,
            r.n,
          ]),
        ),
      );
    } else {
      const res = await fetch(`${baseUrl}/metrics`);
      const parsed = eventsByStatusFromMetrics(await res.text());
      if (!parsed) throw new Error('GET /metrics has no hookrun_events{status=…} gauge: cannot watch the embedded inbox drain');
      last = parsed;
    }
    const total = Object.values(last).reduce((a, b) => a + b, 0);
    const unsettled = UNSETTLED.reduce((n, status) => n + (last[status] ?? 0), 0);
    return total >= expected && unsettled === 0 ? last : undefined;
  };
  try {
    const byStatus = await pollUntil(`the inbox to settle (${expected} events)`, timeoutMs, settled, 200);
    return { ms: Date.now() - started, byStatus };
  } catch (error) {
    throw new Error(`inbox not settled after ${timeoutMs} ms: ${JSON.stringify(last)}`, { cause: error });
  }
}
