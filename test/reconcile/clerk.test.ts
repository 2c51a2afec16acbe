import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadJobs } from '../../src/cron/registry.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { createDefaultHandlers } from '../../src/inbox/handlers/defaults.js';
import { SenderApiError } from '../../src/reconcile/sender-api.js';
import { parseSenderSince, SENDER_RECONCILES } from '../../src/reconcile/senders.js';
import { createHarness } from '../cron/support.js';
import { testConfig } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { FakeClerkApi, TEST_CLERK_KEY } from '../helpers/fake-clerk-api.js';
import { drain, testWorker } from '../inbox/fixtures.js';

const HOUR = 3_600_000;

/** A Clerk user as the Backend API returns it, last updated `hoursAgo`. */
const user = (i: number, hoursAgo: number, email = `u${i}@example.com`) => ({
  object: 'user',
  id: `user_c${String(i).padStart(4, '0')}`,
  first_name: `Ada${i}`,
  last_name: 'Lovelace',
  primary_email_address_id: `idn_${i}`,
  email_addresses: [{ id: `idn_${i}`, object: 'email_address', email_address: email }],
  created_at: Date.now() - 1000 * HOUR,
  updated_at: Math.round(Date.now() - hoursAgo * HOUR),
});
const organization = (i: number, hoursAgo: number) => ({
  object: 'organization',
  id: `org_c${String(i).padStart(4, '0')}`,
  name: `Org ${i}`,
  slug: `org-${i}`,
  created_at: Date.now() - (1000 - i) * HOUR,
  updated_at: Math.round(Date.now() - hoursAgo * HOUR),
});

describe.each(databaseKinds())('reconcile clerk on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  const api = new FakeClerkApi();
  let env: Record<string, string>;
  beforeAll(async () => {
    env = { CLERK_SECRET_KEY: TEST_CLERK_KEY, CLERK_API_BASE: await api.start() };
  });
  afterAll(() => api.close());
  beforeEach(() => api.reset());
  const run = (since = '3d', overrides: Record<string, string | undefined> = {}, onProgress?: (c: { found: number; added: number }) => void) =>
    SENDER_RECONCILES.clerk.run({
      config: testConfig({ ...env, ...overrides }),
      db: testDb.db,
      writer: new EventWriter(testDb.db),
      since: parseSenderSince('clerk', since, Date.now()),
      onProgress,
    });
  const process = () => drain(testWorker(testDb.db, { handlers: createDefaultHandlers({ providers: { payments: 'stripe', auth: 'clerk' } }) }).worker);

  it('stores users and organizations changed since --since as user.updated / organization.updated (paged); the Clerk mirror applies them; a rerun stores nothing', async () => {
    api.users.push(...Array.from({ length: 250 }, (_, i) => user(i, i * 0.5 + 0.1))); // 0.5 h apart: 144 in the last 72 h
    api.organizations.push(...Array.from({ length: 130 }, (_, i) => organization(i, i + 0.1))); // 72 in the last 72 h
    const progress: number[] = [];
    const first = await run('3d', {}, ({ found }) => progress.push(found));
    expect(first).toMatchObject({ found: 144 + 72, added: 144 + 72, alreadyStored: 0 });
    expect(progress.slice(0, 2)).toEqual([100, 144]); // a page at a time, for the CLI's progress line
    expect(first.addedIds[0]).toMatch(/^backfill_(user|organization)_/);
    expect(api.requests.filter((r) => r.startsWith('GET /v1/users')).length).toBe(2); // stops at the first user older than the window
    await process();
    expect(await testDb.db.query(`SELECT count(*)::int AS n FROM hookrun.users`)).toEqual([{ n: 144 }]);
    expect(await testDb.db.query(`SELECT count(*)::int AS n FROM hookrun.organizations`)).toEqual([{ n: 72 }]);
    const [ada] = await testDb.db.query<{ email: string; first_name: string }>(`SELECT email, first_name FROM hookrun.users WHERE id = 'user_c0003'`);
    expect(ada).toEqual({ email: 'u3@example.com', first_name: 'Ada3' });

    expect(await run('3d')).toMatchObject({ found: 216, added: 0, alreadyStored: 216 });
    api.users[3] = user(3, 0, 'new@example.com'); // changed since: a new state, a new event
    expect(await run('3d')).toMatchObject({ found: 216, added: 1, addedIds: [`backfill_user_user_c0003_${api.users[3].updated_at}`] });
    await process();
    expect(await testDb.db.query(`SELECT email FROM hookrun.users WHERE id = 'user_c0003'`)).toEqual([{ email: 'new@example.com' }]);
  });

  it('an older state listed after a newer webhook leaves the mirror as the webhook set it', async () => {
    const fresh = { ...user(7, 0, 'fresh@example.com'), updated_at: Date.now() };
    await new EventWriter(testDb.db).write({
      source: 'auth',
      key: 'msg_webhook',
      type: 'user.updated',
      payloadJson: JSON.stringify({ data: fresh, object: 'event', type: 'user.updated' }),
    });
    api.users.push(user(7, 2, 'stale@example.com'));
    expect(await run('1d')).toMatchObject({ added: 1 });
    await process();
    expect(await testDb.db.query(`SELECT email FROM hookrun.users WHERE id = 'user_c0007'`)).toEqual([{ email: 'fresh@example.com' }]);
  });

  it.each([
    [
      401,
      /Clerk API answered 401: the key is wrong or lacks access \(GET \/v1\/users\): The provided Clerk Secret Key is invalid.* \(authentication_invalid\)/,
    ],
    [429, /Clerk API answered 429: rate limited, retry after 30 s \(GET \/v1\/organizations\): You have exceeded the rate limit/],
    [500, /Clerk API answered 500 \(GET \/v1\/users\): There was an internal error on our servers/],
  ] as const)('Clerk answering %i: its own message; the pages listed before it are stored, and a rerun stores the rest', async (status, message) => {
    api.users.push(...Array.from({ length: 150 }, (_, i) => user(i, i * 0.1)));
    api.organizations.push(organization(1, 1));
    api.failNext(status, status === 429 ? 2 : status === 500 ? 1 : 0); // 429 on the organizations, 500 on the users' second page
    const error = await run('1d').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SenderApiError);
    expect((error as Error).message).toMatch(message);
    const storedBefore = { 401: 0, 500: 100, 429: 150 }[status]; // nothing, the users' first page, every user
    expect(await testDb.db.query(`SELECT count(*)::int AS n FROM hookrun.webhook_events`)).toEqual([{ n: storedBefore }]);
    if (storedBefore > 0) expect((error as Error).message).toMatch(`the ${storedBefore} events listed before it are stored, ${storedBefore} of them new`);
    expect(await run('1d')).toMatchObject({ found: 151, added: 151 - storedBefore, alreadyStored: storedBefore });
  });

  it('a missing CLERK_SECRET_KEY names it; AUTH_PROVIDER=workos is refused; the reconcile-clerk job stores what changed', async () => {
    await expect(run('3d', { CLERK_SECRET_KEY: undefined })).rejects.toThrow(/^CLERK_SECRET_KEY is not set/);
    await expect(run('3d', { AUTH_PROVIDER: 'workos' })).rejects.toThrow(/^AUTH_PROVIDER is workos, .*set AUTH_PROVIDER=clerk/);
    api.users.push(user(1, 1), user(2, 2));
    const jobs = new Map([...(await loadJobs())].filter(([name]) => name === 'reconcile-clerk'));
    const harness = await createHarness(testDb.db, { jobs, env });
    harness.clock.set(Date.now());
    const ran = await harness.cron.runJob('reconcile-clerk', 'cli');
    expect([ran.status, ran.error]).toEqual(['succeeded', null]);
    expect(await testDb.db.query(`SELECT count(*)::int AS n FROM hookrun.webhook_events WHERE type = 'user.updated'`)).toEqual([{ n: 2 }]);
  });
});
