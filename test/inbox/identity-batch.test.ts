import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../src/db/database.js';
import {
  IdentityMirrorWrites,
  markMembershipDeleted,
  markOrganizationDeleted,
  markUserDeleted,
  upsertMembership,
  upsertOrganization,
  upsertUser,
  type DeletedState,
  type MembershipState,
  type OrganizationState,
  type UserState,
} from '../../src/db/identity-mirror.js';
import { databaseKinds, emptyTables, useTestDatabase } from '../helpers/db.js';
import { clerkDeleted, clerkMembership, clerkOrganization, clerkUser, drain, storeEvent, testWorker } from './fixtures.js';

type Write =
  | ['user', UserState]
  | ['userDeleted', DeletedState & { provider?: string }]
  | ['organization', OrganizationState]
  | ['organizationDeleted', DeletedState]
  | ['membership', MembershipState]
  | ['membershipDeleted', Omit<MembershipState, 'role'>];

type Table = 'users' | 'organizations' | 'memberships';
const TABLE: Record<Write[0], Table> = {
  user: 'users',
  userDeleted: 'users',
  organization: 'organizations',
  organizationDeleted: 'organizations',
  membership: 'memberships',
  membershipDeleted: 'memberships',
};

/**
 * The one-statement-per-write SQL of identity-mirror.ts as it was before the
 * writes were batched (commit 58199ad), kept here as the oracle.
 */
async function referenceWrite(db: Queryable, [kind, w]: Write): Promise<boolean> {
  const table = TABLE[kind];
  const upsert = async (fields: Record<string, string | null>) => {
    const columns = Object.keys(fields);
    return db.query(
      `INSERT INTO hookrun.${table} (id, source_updated_at${columns.map((c) => `, ${c}`).join('')})
       VALUES ($1, $2::timestamptz${columns.map((_, i) => `, $${i + 3}`).join('')})
       ON CONFLICT (id) DO UPDATE SET source_updated_at = excluded.source_updated_at${columns.map((c) => `, ${c} = excluded.${c}`).join('')}
       WHERE ${table}.source_updated_at <= excluded.source_updated_at
         AND (${table}.deleted_at IS NULL OR ${table}.deleted_at < excluded.source_updated_at)
       RETURNING id`,
      [w.id, w.at.toISOString(), ...columns.map((c) => fields[c])],
    );
  };
  const markDeleted = async (known: Record<string, string | null>) => {
    const columns = Object.keys(known);
    return db.query(
      `INSERT INTO hookrun.${table} (id, deleted_at, source_updated_at${columns.map((c) => `, ${c}`).join('')})
       VALUES ($1, $2::timestamptz, $2::timestamptz${columns.map((_, i) => `, $${i + 3}`).join('')})
       ON CONFLICT (id) DO UPDATE SET deleted_at = excluded.deleted_at,
         source_updated_at = greatest(${table}.source_updated_at, excluded.source_updated_at)${columns.map((c) => `, ${c} = coalesce(${table}.${c}, excluded.${c})`).join('')}
       WHERE ${table}.deleted_at IS NULL
       RETURNING id`,
      [w.id, w.at.toISOString(), ...columns.map((c) => known[c])],
    );
  };
  let rows: unknown[];
  if (kind === 'user') rows = await upsert({ email: w.email, first_name: w.firstName, last_name: w.lastName, provider: w.provider ?? 'clerk' });
  else if (kind === 'userDeleted') rows = await markDeleted(w.provider ? { provider: w.provider } : {});
  else if (kind === 'organization') rows = await upsert({ name: w.name, slug: w.slug });
  else if (kind === 'organizationDeleted') rows = await markDeleted({});
  else if (kind === 'membership') rows = await upsert({ organization_id: w.organizationId, user_id: w.userId, role: w.role });
  else rows = await markDeleted({ organization_id: w.organizationId, user_id: w.userId });
  return rows.length > 0;
}

/** The same write through the shipped single-write exports (a batch of one each). */
function singleWrite(db: Queryable, [kind, w]: Write): Promise<boolean> {
  if (kind === 'user') return upsertUser(db, w);
  if (kind === 'userDeleted') return markUserDeleted(db, w.id, w.at, w.provider);
  if (kind === 'organization') return upsertOrganization(db, w);
  if (kind === 'organizationDeleted') return markOrganizationDeleted(db, w.id, w.at);
  if (kind === 'membership') return upsertMembership(db, w);
  return markMembershipDeleted(db, w);
}

function enqueue(queue: IdentityMirrorWrites, [kind, w]: Write): void {
  if (kind === 'user') queue.user(w);
  else if (kind === 'userDeleted') queue.userDeleted(w);
  else if (kind === 'organization') queue.organization(w);
  else if (kind === 'organizationDeleted') queue.organizationDeleted(w);
  else if (kind === 'membership') queue.membership(w);
  else queue.membershipDeleted(w);
}

/** A small seeded generator (mulberry32), so a failing sequence can be replayed from its seed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** `count` writes over few ids and few seconds (ties, stale writes, deletes before and after updates). */
function randomWrites(random: () => number, count: number): Write[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const at = () => new Date(Date.UTC(2026, 0, 1) + Math.floor(random() * 40) * 1000);
  const maybe = <T>(value: T): T | null => (random() < 0.2 ? null : value);
  const writes: Write[] = [];
  for (let i = 0; i < count; i++) {
    const deleting = random() < 0.25;
    const table = pick(['users', 'organizations', 'memberships'] as const);
    if (table === 'users') {
      const id = pick(['user_1', 'user_2', 'user_3', 'user_4']);
      const provider = pick([undefined, 'clerk', 'workos']);
      writes.push(
        deleting
          ? ['userDeleted', { id, at: at(), provider }]
          : ['user', { id, at: at(), email: maybe(`${id}+${i}@example.com`), firstName: maybe(pick(['Ada', 'Grace'])), lastName: maybe(`L${i}`), provider }],
      );
    } else if (table === 'organizations') {
      const id = pick(['org_1', 'org_2', 'org_3']);
      writes.push(
        deleting ? ['organizationDeleted', { id, at: at() }] : ['organization', { id, at: at(), name: maybe(`Acme ${i}`), slug: maybe(`acme-${i}`) }],
      );
    } else {
      const id = pick(['orgmem_1', 'orgmem_2', 'orgmem_3', 'orgmem_4']);
      const organizationId = maybe(pick(['org_1', 'org_2']));
      const userId = maybe(pick(['user_1', 'user_2']));
      writes.push(
        deleting
          ? ['membershipDeleted', { id, at: at(), organizationId, userId }]
          : ['membership', { id, at: at(), organizationId, userId, role: maybe(pick(['org:admin', 'org:member'])) }],
      );
    }
  }
  return writes;
}

async function mirrorState(db: Queryable) {
  return {
    users: await db.query('SELECT id, email, first_name, last_name, provider, deleted_at, source_updated_at FROM hookrun.users ORDER BY id'),
    organizations: await db.query('SELECT id, name, slug, deleted_at, source_updated_at FROM hookrun.organizations ORDER BY id'),
    memberships: await db.query('SELECT id, organization_id, user_id, role, deleted_at, source_updated_at FROM hookrun.memberships ORDER BY id'),
  };
}

/** What a write met, from the row before it and whether it wrote: every case the mirror's rules tell apart. */
async function classify(db: Queryable, [kind, w]: Write, apply: () => Promise<boolean>): Promise<string> {
  const [before] = await db.query<{ deleted_at: Date | null }>(`SELECT deleted_at FROM hookrun.${TABLE[kind]} WHERE id = $1`, [w.id]);
  const written = await apply();
  const deleting = kind.endsWith('Deleted');
  if (!before) return deleting ? 'tombstone' : 'create';
  if (deleting) return written ? 'delete' : 'repeated delete';
  if (!written) return 'stale update';
  return before.deleted_at ? 'update after delete' : 'update';
}

/** A statement counter around `db`. */
function counting(db: Queryable): Queryable & { statements: number } {
  const counted = {
    statements: 0,
    query<T>(text: string, params?: unknown[]) {
      counted.statements++;
      return db.query<T>(text, params);
    },
  };
  return counted;
}

/**
 * Clerk deliveries of a few objects' lives (created, updates, deleted, an
 * update whose `updated_at` is after the delete's `timestamp`, repeats),
 * shuffled: the arrival order a backlog may have.
 */
function shuffledClerkEvents(random: () => number): Array<{ type: string; payload: unknown }> {
  const t0 = Date.UTC(2026, 0, 1);
  const events: Array<{ type: string; payload: unknown }> = [];
  const add = (type: string, payload: unknown) => events.push({ type, payload });
  for (let n = 1; n <= 5; n++) {
    const user = `user_${n}`;
    const org = `org_${n}`;
    const membership = `orgmem_${n}`;
    add('user.created', clerkUser('user.created', user, t0 + n * 1000, { email: `${user}@example.com` }));
    for (let u = 1; u <= 4; u++)
      add(
        'user.updated',
        clerkUser('user.updated', user, t0 + n * 1000 + u * 10_000 + Math.floor(random() * 3) * 1000, { first: `First ${u}`, last: `Last ${n}` }),
      );
    add('organization.created', clerkOrganization('organization.created', org, t0 + n * 1000, `Acme ${n}`));
    add('organization.updated', clerkOrganization('organization.updated', org, t0 + n * 1000 + 20_000, `Acme ${n} Renamed`));
    add('organizationMembership.created', clerkMembership('organizationMembership.created', membership, t0 + n * 1000));
    add('organizationMembership.updated', clerkMembership('organizationMembership.updated', membership, t0 + n * 1000 + 15_000, 'org:admin'));
    if (n % 2 === 1) {
      add('user.deleted', clerkDeleted('user.deleted', 'user', user, t0 + n * 1000 + 25_000));
      add('user.updated', clerkUser('user.updated', user, t0 + n * 1000 + 60_000, { first: 'After delete' })); // skew: newer than the delete
      add('organization.deleted', clerkDeleted('organization.deleted', 'organization', org, t0 + n * 1000 + 30_000));
      const deleted = clerkDeleted('organizationMembership.deleted', 'organization_membership', membership, t0 + n * 1000 + 18_000);
      if (n === 3) Object.assign(deleted.data, { organization: { id: org }, public_user_data: { user_id: user } });
      add('organizationMembership.deleted', deleted);
    }
  }
  // Deletes of objects never seen (tombstones), one with the membership's organization and user.
  add('user.deleted', clerkDeleted('user.deleted', 'user', 'user_gone', t0 + 5000));
  add('organization.deleted', clerkDeleted('organization.deleted', 'organization', 'org_gone', t0 + 5000));
  add('organizationMembership.deleted', {
    ...clerkDeleted('organizationMembership.deleted', 'organization_membership', 'orgmem_gone', t0 + 5000),
    data: { deleted: true, id: 'orgmem_gone', object: 'organization_membership', organization: { id: 'org_9' }, public_user_data: { user_id: 'user_9' } },
  });
  add('user.created', clerkUser('user.created', 'user_gone', t0 + 1000));
  for (const e of events.slice(0, 10)) add(e.type, e.payload); // delivered twice
  for (let i = events.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [events[i], events[j]] = [events[j]!, events[i]!];
  }
  return events;
}

describe.each(databaseKinds())('identity mirror writes batched on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  it.each([1, 2, 3, 4])(
    'random writes (seed %i) queued and flushed at once end as the old one-statement-per-write SQL and the single writes leave them',
    async (seed) => {
      const writes = randomWrites(seeded(seed), 300);
      const cases = new Map<string, number>();
      const expected: boolean[] = [];
      for (const write of writes) {
        const found = await classify(testDb.db, write, async () => {
          const written = await referenceWrite(testDb.db, write);
          expected.push(written);
          return written;
        });
        cases.set(found, (cases.get(found) ?? 0) + 1);
      }
      // The sequence exercises every rule: creates, updates, stale ones, deletes, tombstones, repeats, updates after deletes.
      for (const name of ['create', 'update', 'stale update', 'tombstone', 'delete', 'repeated delete', 'update after delete'])
        expect(cases.get(name), name).toBeGreaterThan(0);
      const reference = await mirrorState(testDb.db);

      await emptyTables(testDb.db);
      const single: boolean[] = [];
      for (const write of writes) single.push(await singleWrite(testDb.db, write));
      expect(single).toEqual(expected);
      expect(await mirrorState(testDb.db)).toEqual(reference);

      await emptyTables(testDb.db);
      const flushed = await testDb.db.transaction(async (tx) => {
        const queue = new IdentityMirrorWrites();
        for (const write of writes) enqueue(queue, write);
        expect(await mirrorState(tx)).toEqual({ users: [], organizations: [], memberships: [] }); // nothing written before the flush
        const counted = counting(tx);
        const result = await queue.flush(counted);
        return { ...result, statements: counted.statements };
      });
      expect(flushed.written).toBe(expected.filter(Boolean).length);
      // Per table, one upsert and one delete statement at most per round; as many rounds as the most writes to one row.
      const rounds = (['users', 'organizations', 'memberships'] as const).map((table) => {
        const perRow = new Map<string, number>();
        for (const [kind, w] of writes) if (TABLE[kind] === table) perRow.set(w.id, (perRow.get(w.id) ?? 0) + 1);
        return Math.max(...perRow.values());
      });
      expect(flushed.statements).toBeLessThanOrEqual(2 * rounds.reduce((a, b) => a + b));
      expect(await mirrorState(testDb.db)).toEqual(reference);
    },
  );

  it.each([11, 12, 13])('shuffled Clerk events (seed %i) through the worker: one batch leaves the mirror as one event per batch does', async (seed) => {
    const events = shuffledClerkEvents(seeded(seed));
    const store = async () => {
      for (const { type, payload } of events) await storeEvent(testDb.db, 'auth', type, payload);
    };
    await store();
    await drain(testWorker(testDb.db, { options: { batchSize: 1 } }).worker);
    const oneByOne = await mirrorState(testDb.db);
    expect(oneByOne.users).toContainEqual(expect.objectContaining({ id: 'user_1', first_name: 'After delete', deleted_at: expect.any(Date) }));
    expect(oneByOne.users).toContainEqual(expect.objectContaining({ id: 'user_gone', deleted_at: expect.any(Date) })); // its late created never clears the delete
    expect(oneByOne.memberships).toContainEqual(expect.objectContaining({ id: 'orgmem_gone', organization_id: 'org_9', user_id: 'user_9' }));

    await emptyTables(testDb.db);
    await store();
    const { worker } = testWorker(testDb.db, { options: { batchSize: 100 } });
    expect(await worker.runOnce()).toBe(events.length);
    expect(await testDb.db.query(`SELECT DISTINCT status FROM hookrun.webhook_events`)).toEqual([{ status: 'processed' }]);
    expect(await mirrorState(testDb.db)).toEqual(oneByOne);
  });

  it('a row written, deleted and updated again in one batch takes its writes in queue order, in rounds of one statement per table and kind', async () => {
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
    const queue = new IdentityMirrorWrites();
    queue.user({ id: 'user_1', email: 'a@example.com', firstName: 'Ada', lastName: null, at: at(10) });
    queue.user({ id: 'user_2', email: 'b@example.com', firstName: null, lastName: null, at: at(10) });
    queue.userDeleted({ id: 'user_3', at: at(5), provider: 'workos' }); // unknown: a workos tombstone
    queue.userDeleted({ id: 'user_1', at: at(20) });
    queue.user({ id: 'user_1', email: 'stale@example.com', firstName: null, lastName: null, at: at(20) }); // as old as the delete: ignored
    queue.user({ id: 'user_1', email: 'skew@example.com', firstName: 'Ada', lastName: 'L', at: at(30) }); // newer: refreshes, stays deleted
    queue.membershipDeleted({ id: 'orgmem_1', organizationId: 'org_1', userId: null, at: at(8) });
    const statements = await testDb.db.transaction(async (tx) => {
      const counted = counting(tx);
      expect(await queue.flush(counted)).toEqual({ written: 6 }); // all but the one as old as the delete
      return counted.statements;
    });
    // users: round 1 upserts user_1, user_2 and deletes user_3 (2 statements), then one each for user_1's delete and two updates; memberships: 1.
    expect(statements).toBe(6);
    const state = await mirrorState(testDb.db);
    expect(state.users).toMatchObject([
      { id: 'user_1', email: 'skew@example.com', last_name: 'L', provider: 'clerk', deleted_at: at(20), source_updated_at: at(30) },
      { id: 'user_2', email: 'b@example.com', deleted_at: null },
      { id: 'user_3', email: null, provider: 'workos', deleted_at: at(5), source_updated_at: at(5) },
    ]);
    expect(state.memberships).toMatchObject([{ id: 'orgmem_1', organization_id: 'org_1', user_id: null, deleted_at: at(8) }]);
  });
});
