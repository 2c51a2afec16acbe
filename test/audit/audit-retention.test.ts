import { describe, expect, it } from 'vitest';
import { listAudit, recordAudit } from '../../src/db/audit.js';
import { prune } from '../../src/retention/prune.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';

const DAY = 86_400_000;

describe.each(databaseKinds())('audit retention on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  it('deletes audit entries past AUDIT_RETENTION_DAYS, counts them in a dry run, and keeps them all at 0 days', async () => {
    const now = Date.now();
    for (const [target, ageDays] of [
      ['old', 400],
      ['older', 700],
      ['recent', 300],
    ] as const) {
      const entry = { operator: 'alice', role: 'operator', via: 'api' as const, action: 'job.pause', target, outcome: 'ok' as const, detail: null };
      await recordAudit(testDb.db, entry, new Date(now - ageDays * DAY));
    }
    const days = { events: 0, dedupeKeys: 0, cronRuns: 0, audit: 365 };
    expect(await prune(testDb.db, { ...days, audit: 0 }, now)).toMatchObject({ auditEntries: 0 });
    expect(await prune(testDb.db, days, now, { dryRun: true })).toMatchObject({ dryRun: true, auditEntries: 2 });
    expect(await listAudit(testDb.db, { limit: 10 })).toHaveLength(3);
    const deleted: Record<string, number> = {};
    const report = await prune(testDb.db, days, now, { onDeleted: (table, n) => (deleted[table] = (deleted[table] ?? 0) + n) });
    expect(report).toMatchObject({ auditEntries: 2, cutoffs: { auditEntries: new Date(now - 365 * DAY).toISOString() } });
    expect(deleted.audit_entries).toBe(2);
    expect((await listAudit(testDb.db, { limit: 10 })).map((e) => e.target)).toEqual(['recent']);
  });
});
