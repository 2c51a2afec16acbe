import { z } from 'zod';
import { parsePayload, type HandlerContext, type HandlerTable } from '../../deliveries/registry.js';

/** A Supabase Database Webhook change, validated: `{type, table, schema, record, old_record}`. */
export interface TableChange {
  type: 'INSERT' | 'UPDATE' | 'DELETE';
  schema: string;
  table: string;
  record: Record<string, unknown> | null;
  oldRecord: Record<string, unknown> | null;
}

/** Acts on changes of one table; idempotent like every handler. */
export type TableHandler = (change: TableChange, ctx: HandlerContext) => Promise<void>;

const changeSchema = z.object({
  type: z.enum(['INSERT', 'UPDATE', 'DELETE']),
  schema: z.string().min(1),
  table: z.string().min(1),
  record: z.record(z.string(), z.unknown()).nullish(),
  old_record: z.record(z.string(), z.unknown()).nullish(),
});

/**
 * The default for a table nobody registered: the change is already recorded
 * (the inbox row keeps the payload), so log it and succeed.
 */
export const recordChange: TableHandler = async (change, ctx) => {
  ctx.log.debug({ eventId: ctx.event.id, table: `${change.schema}.${change.table}`, type: change.type }, 'database change recorded');
};

/**
 * Build the database source's handlers over a per-table registry keyed
 * `schema.table` (e.g. `public.orders`) or just `table`; tables not in it get
 * `recordChange`. https://supabase.com/docs/guides/database/webhooks
 */
export function createDatabaseChangesHandlers(tables: Record<string, TableHandler> = {}, fallback: TableHandler = recordChange): HandlerTable {
  const handle = async (ctx: HandlerContext): Promise<void> => {
    const parsed = parsePayload(changeSchema, ctx.event);
    const change: TableChange = {
      type: parsed.type,
      schema: parsed.schema,
      table: parsed.table,
      record: parsed.record ?? null,
      oldRecord: parsed.old_record ?? null,
    };
    const handler = tables[`${change.schema}.${change.table}`] ?? tables[change.table] ?? fallback;
    await handler(change, ctx);
  };
  return { INSERT: handle, UPDATE: handle, DELETE: handle };
}

/** The shipped per-table registry: empty, so every change is recorded only. Add `'public.orders': handler` here. */
export const databaseTableHandlers: Record<string, TableHandler> = {};
