import type { Database } from '../../../src/db/database.js';
import { createDefaultHandlers, type HandlerServices } from '../../../src/inbox/handlers/defaults.js';
import type { TestApp } from '../../helpers/app.js';
import { drain, testWorker } from '../../inbox/fixtures.js';

/** One published example as its sender would post it: the route, the body, its headers, and what hookrun must store. */
export interface PublishedDelivery {
  /** Where the example comes from (`github api.github.com issues`), for failure messages. */
  label: string;
  route: string;
  body: string;
  headers: Record<string, string>;
  /** The idempotency key hookrun stores, and the type the provider's documentation gives the event. */
  key: string;
  type: string;
}

/** What one delivery came to: the answer, and the stored event's type and status after the worker ran. */
export interface PublishedOutcome {
  label: string;
  status: number;
  answer: string;
  stored: Array<{ type: string; status: string; last_error: string | null }>;
  expectedType: string;
}

/**
 * Post every delivery to the in-process app (a few at a time, as a sender's
 * workers would), run the shipped handlers of `services.providers` until
 * nothing is due, and read back what each delivery became: the whole list
 * is checked in one pass instead of one test per example.
 */
export async function deliverAll(t: TestApp, db: Database, deliveries: PublishedDelivery[], services: HandlerServices = {}): Promise<PublishedOutcome[]> {
  const answers: Array<{ status: number; answer: string }> = [];
  const CONCURRENCY = 16;
  for (let i = 0; i < deliveries.length; i += CONCURRENCY) {
    const chunk = deliveries.slice(i, i + CONCURRENCY);
    const results = await Promise.all(
      chunk.map(async (d) => {
        const res = await t.app.request(`http://localhost/webhooks/${d.route}`, { method: 'POST', body: d.body, headers: d.headers });
        return { status: res.status, answer: await res.text() };
      }),
    );
    answers.push(...results);
  }
  await drain(testWorker(db, { handlers: createDefaultHandlers(services) }).worker);
  const rows = await db.query<{ key: string; type: string; status: string; last_error: string | null }>(
    'SELECT key, type, status, last_error FROM hookrun.webhook_events ORDER BY id',
  );
  const byKey = new Map<string, typeof rows>();
  for (const row of rows) byKey.set(row.key, [...(byKey.get(row.key) ?? []), row]);
  return deliveries.map((d, i) => ({
    label: d.label,
    ...answers[i]!,
    stored: (byKey.get(d.key) ?? []).map(({ type, status, last_error }) => ({ type, status, last_error })),
    expectedType: d.type,
  }));
}

/**
 * The deliveries that did not come out as published examples must: answered
 * 2xx, stored exactly once under the documented type, and `processed` or
 * `ignored` by the shipped handlers (never `failed` or `dead`). Empty when all
 * is well; otherwise one line per problem, so a failure names every example.
 */
export function problems(outcomes: PublishedOutcome[]): string[] {
  const lines: string[] = [];
  for (const o of outcomes) {
    if (o.status < 200 || o.status > 299) lines.push(`${o.label}: answered ${o.status} ${o.answer.slice(0, 300)}`);
    else if (o.stored.length !== 1) lines.push(`${o.label}: stored ${o.stored.length} times`);
    else if (o.stored[0]!.type !== o.expectedType) lines.push(`${o.label}: stored as "${o.stored[0]!.type}", documented "${o.expectedType}"`);
    else if (!['processed', 'ignored'].includes(o.stored[0]!.status))
      lines.push(`${o.label}: ${o.stored[0]!.status} (${(o.stored[0]!.last_error ?? '').slice(0, 300)})`);
  }
  return lines;
}
