import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EventWriter } from '../../src/db/event-writer.js';
import { parseSenderSince, SENDER_RECONCILES, type ReconcileSender } from '../../src/reconcile/senders.js';
import { testConfig } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { FakeClerkApi, TEST_CLERK_KEY } from '../helpers/fake-clerk-api.js';
import { FakePaddleApi, FakeWorkosApi, TEST_PADDLE_KEY, TEST_WORKOS_KEY } from '../helpers/fake-event-apis.js';
import type { FakeSenderApi } from '../helpers/fake-sender-api.js';

const MINUTE = 60_000;
/** About 5 KB of payload per event, as the large windows that exhausted memory had. */
const FILLER = 'x'.repeat(5_000);
const iso = (minutesAgo: number) => new Date(Date.now() - minutesAgo * MINUTE).toISOString();
const id = (prefix: string, i: number) => `${prefix}_${String(1e6 - i).padStart(8, '0')}`; // later events sort after earlier ones

/**
 * A reconcile's memory does not grow with its window: each page the sender's
 * API lists is stored before the page after the next is asked for, so what it
 * holds is a page or two, not the window (60,000 Paddle events of 5 KB took a
 * server from 631 MB to 1.46 GB when every page was read first). Observed
 * from the fake API: at each page request, how many events the inbox holds.
 */
describe('a reconcile stores page by page', () => {
  const kind = databaseKinds().at(-1)!; // PostgreSQL when there is one
  const testDb = useTestDatabase(kind);
  const apis = { paddle: new FakePaddleApi(), workos: new FakeWorkosApi(), clerk: new FakeClerkApi() };
  let env: Record<string, string>;
  beforeAll(async () => {
    env = {
      PAYMENTS_PROVIDER: 'paddle',
      PADDLE_API_KEY: TEST_PADDLE_KEY,
      PADDLE_API_BASE: await apis.paddle.start(),
      AUTH_PROVIDER: 'workos',
      WORKOS_API_KEY: TEST_WORKOS_KEY,
      WORKOS_API_BASE: await apis.workos.start(),
      CLERK_SECRET_KEY: TEST_CLERK_KEY,
      CLERK_API_BASE: await apis.clerk.start(),
    };
  });
  afterAll(async () => {
    for (const api of Object.values(apis)) await api.close();
  });
  beforeEach(() => {
    for (const api of Object.values(apis)) api.reset();
  });

  /** Run the reconcile, recording how many events were stored when each page was requested. */
  async function reconcile(sender: ReconcileSender, api: FakeSenderApi, overrides: Record<string, string> = {}) {
    const storedAtRequest: number[] = [];
    api.onRequest = async () => {
      const [row] = await testDb.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.webhook_events`);
      storedAtRequest.push(row!.n);
    };
    const summary = await SENDER_RECONCILES[sender].run({
      config: testConfig({ ...env, ...overrides }),
      db: testDb.db,
      writer: new EventWriter(testDb.db),
      since: parseSenderSince(sender, '3d', Date.now()),
    });
    return { summary, storedAtRequest };
  }

  /** Page k (from 0) was stored before page k + 2 was asked for. */
  function expectInterleaved(storedAtRequest: number[], pageSize: number, pages: number) {
    expect(storedAtRequest).toHaveLength(pages);
    storedAtRequest.forEach((stored, k) => expect(stored, `events stored when page ${k} was requested`).toBeGreaterThanOrEqual((k - 1) * pageSize));
  }

  it('paddle: 2,000 events of 5 KB (10 pages of 200)', async () => {
    for (let i = 0; i < 2_000; i++) {
      const at = iso(i + 1);
      apis.paddle.events.push({
        event_id: id('evt', i),
        event_type: 'subscription.updated',
        occurred_at: at,
        data: { id: `sub_${i}`, updated_at: at, note: FILLER },
      });
    }
    const { summary, storedAtRequest } = await reconcile('paddle', apis.paddle);
    expect(summary).toMatchObject({ found: 2_000, added: 2_000, alreadyStored: 0 });
    expect(summary.addedIds).toHaveLength(100);
    expect(summary.addedIds[0]).toBe(id('evt', 1_999)); // oldest first, kept in bounded memory
    expectInterleaved(storedAtRequest, 200, 10);
  });

  it('workos: 1,000 events (10 pages of 100)', async () => {
    for (let i = 0; i < 1_000; i++)
      apis.workos.events.push({
        object: 'event',
        id: id('event', 1_000 - i),
        event: 'user.updated',
        created_at: iso(1_000 - i),
        data: { id: `user_${i}`, note: FILLER },
      });
    const { summary, storedAtRequest } = await reconcile('workos', apis.workos, { AUTH_PROVIDER: 'workos' });
    expect(summary).toMatchObject({ found: 1_000, added: 1_000 });
    expectInterleaved(storedAtRequest, 100, 10);
  });

  it('clerk: 1,000 users (10 pages of 100), then the organizations', async () => {
    for (let i = 0; i < 1_000; i++) apis.clerk.users.push({ object: 'user', id: `user_${i}`, updated_at: Date.now() - (i + 1) * MINUTE, note: FILLER });
    const { summary, storedAtRequest } = await reconcile('clerk', apis.clerk, { AUTH_PROVIDER: 'clerk' });
    expect(summary).toMatchObject({ found: 1_000, added: 1_000 });
    expectInterleaved(storedAtRequest, 100, 12); // 10 full pages of users, an empty 11th, then the organizations
  });
});
