import type { Database } from './database.js';

/** The HTTP request an event came in, as kept (event_requests): what the console and `GET /api/events/:id` show. */
export interface EventRequest {
  /** Header name (lowercase) → value; secrets and signatures already masked when kept. */
  headers: Record<string, string>;
  /** The body's text as received and verified. */
  body: string;
  /** One line: what verified it, e.g. `stripe: Stripe-Signature v1 matched, signed 3 s before receipt`. */
  verification: string;
}

/** The request kept for an event, or null when it has none (not received over HTTP, or stored before requests were kept). */
export async function getEventRequest(db: Database, eventId: number): Promise<EventRequest | null> {
  // A JSON body is not stored twice: it is the event's payload, kept as it came.
  const [row] = await db.query<{ headers: Record<string, string> | string; body: string; verification: string }>(
    `SELECT r.headers, coalesce(r.body, e.payload::text) AS body, r.verification
     FROM hookrun.event_requests r JOIN hookrun.webhook_events e ON e.id = r.event_id WHERE r.event_id = $1`,
    [eventId],
  );
  if (!row) return null;
  const headers = typeof row.headers === 'string' ? (JSON.parse(row.headers) as Record<string, string>) : row.headers;
  return { headers, body: row.body, verification: row.verification };
}
