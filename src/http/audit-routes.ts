import type { Hono } from 'hono';
import { z } from 'zod';
import { listAudit } from '../db/audit.js';
import type { Database } from '../db/database.js';
import { parse } from './admin-request.js';
import { MAX_PAGE } from './admin-schemas.js';

/** `GET /api/audit`: the query the route validates and the OpenAPI document describes. */
export const auditListQuery = z.object({
  operator: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,32}$/, 'operator is a name from ADMIN_TOKENS (or admin, local)')
    .optional()
    .describe('only what this operator did'),
  action: z
    .string()
    .regex(/^[a-z.]{1,40}$/, 'action is a name like job.pause or event.replay')
    .optional()
    .describe('only this action, e.g. job.pause, event.replay, replay.start'),
  outcome: z.enum(['ok', 'refused', 'failed']).optional().describe('only actions that ended so'),
  limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(50).describe('page size'),
  cursor: z
    .string()
    .regex(/^\d{1,15}$/, 'cursor must be the nextCursor of the previous page')
    .optional()
    .describe('the `nextCursor` of the previous page'),
});

/**
 * `GET /api/audit`: every action taken or tried from the console, the admin
 * API and the CLI, newest first, with who, how, when, on what and how it ended.
 * A read, so a viewer may list it too.
 */
export function addAuditRoute(app: Hono, db: Database): void {
  app.get('/audit', async (c) => {
    const q = parse(auditListQuery, c.req.query());
    const entries = await listAudit(db, {
      limit: q.limit + 1,
      before: q.cursor === undefined ? undefined : Number(q.cursor),
      operator: q.operator,
      action: q.action,
      outcome: q.outcome,
    });
    const page = entries.slice(0, q.limit);
    return c.json({ entries: page, nextCursor: entries.length > q.limit ? String(page[page.length - 1]!.id) : null });
  });
}
