import type { Config } from '../config/config.js';
import type { Queryable } from '../db/database.js';
import { providerFor, SOURCES } from '../webhooks/providers/index.js';

/** The parts of the config the Senders view reads: which routes exist and whether each has a secret (never the value). */
export type SenderConfig = Pick<Config, 'secrets' | 'customWebhooks' | 'providers'>;

/** One sender route as the Senders page and `GET /api/senders` show it. */
export interface SenderActivity {
  route: string;
  /** Who signs it (`Stripe`, `Clerk`, a custom scheme's name). */
  sender: string;
  custom: boolean;
  /** Whether a signing secret is set; never any part of it. */
  secretConfigured: boolean;
  /** When its latest event was received, or null. */
  lastDeliveryAt: string | null;
  /** Events stored in the last 24 h (duplicates are not stored, so not counted). */
  accepted24h: number;
  /** Refused requests in the last 24 h, by reason (an error code). */
  rejections24h: Record<string, number>;
}

/** Every sender route this hookrun serves: the shipped ones, then platform.json's custom ones. */
export function senderRoutes(config: SenderConfig): Array<Pick<SenderActivity, 'route' | 'sender' | 'custom' | 'secretConfigured'>> {
  return [
    ...SOURCES.map((route) => ({ route, sender: providerFor(config, route).title, custom: false, secretConfigured: config.secrets[route] !== undefined })),
    ...config.customWebhooks.map((w) => ({ route: w.route, sender: `custom (HMAC-${w.algorithm})`, custom: true, secretConfigured: w.secret !== undefined })),
  ];
}

/**
 * Each route's last delivery, events accepted and refusals in the 24 h before
 * `now`. Cheap on a large inbox: the last delivery is one step down
 * `webhook_events_source_idx (source, id)`; the day's counts start at the
 * first id received in the window (found through the received_at BRIN index,
 * `id + 0` keeps the planner off a walk of the primary key from its start).
 */
export async function listSenderActivity(db: Queryable, config: SenderConfig, now: number): Promise<SenderActivity[]> {
  const routes = senderRoutes(config);
  const since = new Date(now - 86_400_000);
  const names = routes.map((r) => r.route);
  const [first] = await db.query<{ id: string | number | null }>('SELECT min(id + 0) AS id FROM hookrun.webhook_events WHERE received_at > $1::timestamptz', [
    since,
  ]);
  const events = await db.query<{ route: string; last: Date | string | null; accepted: string | number }>(
    `SELECT s.route, (SELECT e.received_at FROM hookrun.webhook_events e WHERE e.source = s.route ORDER BY e.id DESC LIMIT 1) AS last,
       (SELECT count(*) FROM hookrun.webhook_events e WHERE e.source = s.route AND e.id >= $2 AND e.received_at > $3::timestamptz) AS accepted
     FROM unnest($1::text[]) AS s(route)`,
    [names, first?.id ?? Number.MAX_SAFE_INTEGER, since],
  );
  const refused = await db.query<{ route: string; reason: string; n: string | number }>(
    `SELECT route, reason, sum(count) AS n FROM hookrun.sender_rejections WHERE route = ANY($1::text[]) AND minute > $2::timestamptz GROUP BY route, reason`,
    [names, new Date(now - 86_400_000 - 60_000)],
  );
  const byRoute = new Map(events.map((e) => [e.route, e]));
  return routes.map((r) => {
    const e = byRoute.get(r.route);
    const rejections24h: Record<string, number> = {};
    for (const row of refused) if (row.route === r.route) rejections24h[row.reason] = Number(row.n);
    return { ...r, lastDeliveryAt: e?.last ? new Date(e.last).toISOString() : null, accepted24h: Number(e?.accepted ?? 0), rejections24h };
  });
}
