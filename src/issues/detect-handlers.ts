import type { Queryable } from '../db/database.js';
import { recordSighting } from './issue-store.js';
import { LOOKBACK_MS } from './issue-types.js';
import { messageHash, normaliseMessage } from './normalise.js';

/** Distinct messages read per pass at most: a flood of unique messages is still one bounded read. */
const MAX_MESSAGES = 2000;
const FAILED = `outcome IN ('failed', 'dead', 'parked')`;

interface Group {
  handler: string;
  shape: string;
  messages: string[];
  latest: string;
  count: number;
  first: Date;
  last: Date;
}

/** The fingerprint of a handler's failures with one message shape. */
export function handlerFingerprint(handler: string, message: string): string {
  return `handler:${handler}:${messageHash(normaliseMessage(message))}`;
}

/**
 * Group the handlers' failed and dead attempts of the last 15 minutes by
 * handler and normalised message, and record each group as a
 * `handler_failing` issue. Occurrences added are the attempts after the
 * issue's last_seen_at, counted in the upsert itself, so a second instance
 * running the same pass adds nothing.
 */
export async function detectHandlerFailures(db: Queryable, now: number): Promise<number> {
  const rows = await db.query<{ handler: string; error: string; n: number; first: Date | string; last: Date | string }>(
    `SELECT handler, error, count(*)::int AS n, min(started_at) AS first, max(started_at) AS last FROM hookrun.event_attempts
     WHERE started_at > $1::timestamptz AND started_at <= $2::timestamptz AND ${FAILED} AND handler IS NOT NULL AND error IS NOT NULL
     GROUP BY handler, error ORDER BY max(started_at) DESC LIMIT ${MAX_MESSAGES}`,
    [new Date(now - LOOKBACK_MS), new Date(now)],
  );
  const groups = new Map<string, Group>();
  for (const row of rows) {
    const shape = normaliseMessage(row.error);
    const key = `handler:${row.handler}:${messageHash(shape)}`;
    const [first, last] = [new Date(row.first), new Date(row.last)];
    const group = groups.get(key) ?? { handler: row.handler, shape, messages: [], latest: row.error, count: 0, first, last };
    groups.set(key, group);
    group.messages.push(row.error);
    group.count += Number(row.n);
    if (first < group.first) group.first = first;
    if (last > group.last) [group.last, group.latest] = [last, row.error];
  }
  for (const [fingerprint, g] of groups) {
    const sighting = {
      fingerprint,
      kind: 'handler_failing' as const,
      subject: g.handler,
      title: `Handler ${g.handler} fails: ${g.shape.slice(0, 160)}`,
      detail: g.latest,
      seenAt: g.last,
      occurrences: g.count,
      firstSeenAt: g.first,
    };
    const added = `(SELECT count(*)::int FROM hookrun.event_attempts a WHERE a.handler = $3 AND a.${FAILED} AND a.error = ANY($9::text[])
      AND a.started_at > i.last_seen_at AND a.started_at <= $8::timestamptz)`;
    await recordSighting(db, sighting, `i.occurrences + ${added}`, [g.messages]);
  }
  return groups.size;
}
