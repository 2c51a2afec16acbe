import { deletePage, insertPage } from '../../db/pages.js';
import type { EngineJobSpec } from '../job.js';

/**
 * Write and delete one row so a database that pauses after inactivity (e.g.
 * a free Supabase project) sees activity. One transaction: whatever fails
 * half-way, no row is left in `pages`.
 */
export default {
  description: 'Insert a temporary row into pages and delete it, so the database sees activity.',
  timeoutMs: 30_000,
  async run({ db, signal, now }) {
    await db.transaction(async (tx) => {
      const id = await insertPage(tx, `hookrun keep-alive ${now.toISOString()}`);
      signal.throwIfAborted();
      if (!(await deletePage(tx, id))) throw new Error(`keep-alive row ${id} vanished before it was deleted`);
    });
  },
} satisfies EngineJobSpec;
