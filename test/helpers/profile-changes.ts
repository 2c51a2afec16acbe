/**
 * INSERT changes to `public.profiles` (record ids 1 to $1), stored as the
 * database receiver stores them, each with its `new_events` row, under the
 * keys `$2_<id>`: a backlog that arrived while nothing processed it.
 */
export const STORE_PROFILE_CHANGES_SQL = `
  WITH stored AS (
    INSERT INTO hookrun.webhook_events (source, key, type, payload)
    SELECT 'database', $2::text || '_' || g, 'INSERT',
           jsonb_build_object('type', 'INSERT', 'schema', 'public', 'table', 'profiles', 'record', jsonb_build_object('id', g), 'old_record', null)
    FROM generate_series(1, $1::int) g ORDER BY g
    RETURNING id)
  INSERT INTO hookrun.new_events (event_id) SELECT id FROM stored`;
