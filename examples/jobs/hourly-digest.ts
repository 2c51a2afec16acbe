import { defineJob } from 'hookrun';

/** /cron/hourly-digest (scheduled in platform.json): one query on the database hookrun shares with the product. */
export default defineJob({
  description: 'Log the database time; a real digest would read the product tables here.',
  timeoutMs: 30_000,
  async run({ db, log }) {
    const [row] = await db.query<{ now: Date }>('SELECT now() AS now');
    log.info({ now: row?.now }, 'hourly digest ran');
  },
});
