import { samplePerson, uuid } from './ids.js';

function profileRow(nowMs: number): Record<string, unknown> {
  const person = samplePerson();
  const created = new Date(nowMs - 86_400_000).toISOString();
  return { id: uuid(), email: person.email, full_name: `${person.firstName} ${person.lastName}`, avatar_url: null, created_at: created, updated_at: created };
}

/**
 * A Supabase Database Webhook payload `{type, table, schema, record,
 * old_record}` for a `public.profiles` row: INSERT has no old record, DELETE
 * no record, UPDATE both (same id). Override `table`/`record` to taste.
 * https://supabase.com/docs/guides/database/webhooks#payload
 */
export function buildSupabaseDatabaseSample(type: string, nowMs: number): Record<string, unknown> {
  const row = profileRow(nowMs);
  const changed = { ...row, full_name: `${row.full_name} Jr.`, updated_at: new Date(nowMs).toISOString() };
  if (type === 'INSERT')
    return { type, table: 'profiles', schema: 'public', record: { ...row, created_at: changed.updated_at, updated_at: changed.updated_at }, old_record: null };
  if (type === 'UPDATE') return { type, table: 'profiles', schema: 'public', record: changed, old_record: row };
  return { type, table: 'profiles', schema: 'public', record: null, old_record: row };
}
