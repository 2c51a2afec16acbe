import type { Queryable } from './database.js';

/**
 * Remember that a dashboard session was logged out, until it would have
 * expired (then it is refused anyway). Expired entries are swept here too, so
 * the table holds only live revocations.
 */
export async function revokeSession(db: Queryable, signature: string, expiresAt: Date, now: Date): Promise<void> {
  await db.query('DELETE FROM hookrun.admin_sessions_revoked WHERE expires_at <= $1', [now.toISOString()]);
  await db.query('INSERT INTO hookrun.admin_sessions_revoked (signature, expires_at) VALUES ($1, $2) ON CONFLICT (signature) DO NOTHING', [
    signature,
    expiresAt.toISOString(),
  ]);
}

/** Whether a session was logged out (on any instance). */
export async function isSessionRevoked(db: Queryable, signature: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM hookrun.admin_sessions_revoked WHERE signature = $1', [signature])).length > 0;
}
