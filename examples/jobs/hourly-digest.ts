import { defineJob } from 'hookrun';

/**
 * /cron/hourly-digest (scheduled in platform.json): one query on the database
 * hookrun shares with the product. A job gets SQL (`db.query`,
 * `db.transaction`), the settings it names in `env: [...]` as `env`, a
 * logger, its signal, and which run this is (`now`, `trigger`,
 * `scheduledFor`, `runId`); nothing else of hookrun.
 */
export default defineJob({
  description: 'Log the database time; a real digest would read the product tables here.',
  timeoutMs: 30_000,
  async run({ db, log, scheduledFor }) {
    const [row] = await db.query<{ now: Date }>('SELECT now() AS now');
    log.info({ now: row?.now, tick: scheduledFor }, 'hourly digest ran');
  },
});
