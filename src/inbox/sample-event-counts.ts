import type { Database } from '../db/database.js';
import { countEventsByStatus } from '../db/events.js';
import type { Metrics } from '../metrics.js';

/**
 * Refresh the `hookrun_events{status}` gauge from the database. Call it right
 * before serving /metrics: a count sampled at scrape time is right for every
 * instance, which a per-process counter could not be.
 */
export async function sampleEventCounts(db: Database, metrics: Metrics): Promise<void> {
  const counts = await countEventsByStatus(db);
  for (const [status, count] of Object.entries(counts)) metrics.eventsByStatus.set({ status }, count);
}
