import { LosslessNumber } from 'lossless-json';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadJobs } from '../../src/cron/registry.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { createDefaultHandlers } from '../../src/inbox/handlers/defaults.js';
import { paddleMirrorHandlers } from '../../src/inbox/handlers/paddle-mirror.js';
import { workosMirrorHandlers } from '../../src/inbox/handlers/workos-mirror.js';
import { RECONCILED_PADDLE_TYPES } from '../../src/reconcile/paddle.js';
import { SenderApiError } from '../../src/reconcile/sender-api.js';
import { parseSenderSince, SENDER_RECONCILES } from '../../src/reconcile/senders.js';
import { RECONCILED_WORKOS_TYPES } from '../../src/reconcile/workos.js';
import { AUTH_PROVIDERS, PAYMENTS_PROVIDERS } from '../../src/webhooks/providers/index.js';
import { buildSample } from '../../src/webhooks/samples.js';
import { createHarness } from '../cron/support.js';
import { testConfig } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { FakePaddleApi, FakeWorkosApi, TEST_PADDLE_KEY, TEST_WORKOS_KEY } from '../helpers/fake-event-apis.js';
import { drain, testWorker } from '../inbox/fixtures.js';

const HOUR = 3_600_000;
const iso = (hoursAgo: number) => new Date(Date.now() - hoursAgo * HOUR).toISOString();
/** A time-ordered id (as Paddle's and WorkOS's are): later events sort after earlier ones. */
const idAt = (prefix: string, hoursAgo: number, i: number) =>
  `${prefix}_${String(1e9 - Math.round(hoursAgo * 1000)).padStart(10, '0')}${String(i).padStart(4, '0')}`;

/** `count` Paddle subscription events, one an hour back from now, each about its own subscription. */
function paddleEvents(count: number) {
  return Array.from({ length: count }, (_, i) => {
    const at = iso(i + 1);
    const sample = buildSample('payments', 'subscription.updated', { data: {} }, Date.parse(at), PAYMENTS_PROVIDERS.paddle);
    const { notification_id: _n, ...listed } = sample; // the events API has no notification
    const data = { ...(sample.data as Record<string, unknown>), id: `sub_p${i}`, updated_at: at };
    return { ...listed, event_id: idAt('evt', i + 1, i), event_type: 'subscription.updated', occurred_at: at, data };
  });
}

function workosEvents(count: number) {
  return Array.from({ length: count }, (_, i) => {
    const at = iso(i + 1);
    const sample = buildSample('auth', 'user.updated', { data: {} }, Date.parse(at), AUTH_PROVIDERS.workos) as { event: string; data: Record<string, unknown> };
    return {
      object: 'event',
      ...sample,
      id: idAt('event', i + 1, i),
      created_at: at,
      data: { ...sample.data, id: `user_w${i}`, email: `w${i}@example.com`, updated_at: at },
    };
  });
}

it('each reconcile lists exactly the types its mirror acts on', () => {
  expect([...RECONCILED_PADDLE_TYPES].sort()).toEqual(Object.keys(paddleMirrorHandlers).sort());
  expect([...RECONCILED_WORKOS_TYPES].sort()).toEqual(Object.keys(workosMirrorHandlers).sort());
  expect(() => parseSenderSince('paddle', '91d', Date.now())).toThrow(/Paddle's events API lists the last 90 days. Use --since 90d at most/);
  expect(() => parseSenderSince('workos', '31d', Date.now())).toThrow(/WorkOS's events API serves the last 30 days/);
});

describe.each(databaseKinds())('reconcile paddle and workos on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  const paddle = new FakePaddleApi();
  const workos = new FakeWorkosApi();
  let env: Record<string, string>;
  beforeAll(async () => {
    env = {
      PAYMENTS_PROVIDER: 'paddle',
      PADDLE_API_KEY: TEST_PADDLE_KEY,
      PADDLE_API_BASE: await paddle.start(),
      AUTH_PROVIDER: 'workos',
      WORKOS_API_KEY: TEST_WORKOS_KEY,
      WORKOS_API_BASE: await workos.start(),
    };
  });
  afterAll(async () => {
    await paddle.close();
    await workos.close();
  });
  beforeEach(() => {
    paddle.reset();
    workos.reset();
  });
  const keys = async (source: string) =>
    (await testDb.db.query<{ key: string }>(`SELECT key FROM hookrun.webhook_events WHERE source = $1 ORDER BY key`, [source])).map((r) => r.key);
  const run = (sender: 'paddle' | 'workos', since = '3d', overrides: Record<string, string | undefined> = {}) =>
    SENDER_RECONCILES[sender].run({
      config: testConfig({ ...env, ...overrides }),
      db: testDb.db,
      writer: new EventWriter(testDb.db),
      since: parseSenderSince(sender, since, Date.now()),
    });

  it('paddle: stores the missing events of the window (paged past 200) as the webhook route would; the Paddle mirror processes them; a rerun adds nothing', async () => {
    const events = paddleEvents(300); // 300 h back: 71 in the last 72 h
    paddle.events.push(...events, { ...events[0]!, event_id: 'evt_zzz_unhandled', event_type: 'transaction.billed' });
    const inWindow = events.slice(0, 71);
    const writer = new EventWriter(testDb.db);
    for (const e of inWindow.slice(0, 10)) await writer.write({ source: 'payments', key: e.event_id, type: e.event_type, payloadJson: JSON.stringify(e) });
    const first = await run('paddle');
    expect(first).toMatchObject({ found: 71, added: 61, alreadyStored: 10 });
    expect(first.addedIds[0]).toBe(inWindow[70]!.event_id);
    expect(await keys('payments')).toEqual(inWindow.map((e) => e.event_id).sort());
    expect(await run('paddle', '10d')).toMatchObject({ found: 239, added: 168, alreadyStored: 71 });
    expect(paddle.requests.some((r) => r.includes('after='))).toBe(true);
    const [stored] = await testDb.db.query<{ type: string; payload: unknown }>(`SELECT type, payload FROM hookrun.webhook_events WHERE key = $1`, [
      inWindow[20]!.event_id,
    ]);
    expect(stored).toEqual({ type: 'subscription.updated', payload: inWindow[20] });
    await drain(testWorker(testDb.db, { handlers: createDefaultHandlers({ providers: { payments: 'paddle', auth: 'clerk' } }) }).worker);
    expect(await testDb.db.query(`SELECT count(*)::int AS n FROM hookrun.subscriptions WHERE provider = 'paddle'`)).toEqual([{ n: 239 }]);
    expect(await run('paddle', '10d')).toMatchObject({ added: 0, alreadyStored: 239 });
  });

  it('paddle: an integer beyond 2^53 in a listed event is stored with its exact digits', async () => {
    const [event] = paddleEvents(1);
    const data = { ...(event!.data as Record<string, unknown>), custom_data: { ledger_id: new LosslessNumber('9223372036854775807') } };
    paddle.events.push({ ...event!, data });
    expect(await run('paddle')).toMatchObject({ added: 1 });
    const [stored] = await testDb.db.query<{ text: string; payload: { data: { custom_data: { ledger_id: unknown } } } }>(
      `SELECT payload::text AS text, payload FROM hookrun.webhook_events WHERE key = $1`,
      [event!.event_id],
    );
    expect(stored!.text).toContain('9223372036854775807');
    expect(stored!.payload.data.custom_data.ledger_id).toBe('9223372036854775807'); // as handlers read it (handlers.md)
  });

  it('workos: stores the missing events (paged past 100) as /webhooks/auth with AUTH_PROVIDER=workos would; the WorkOS mirror processes them', async () => {
    workos.events.push(...workosEvents(150)); // 150 h back: 120 in the last 5 days
    const first = await run('workos', '5d');
    expect(first).toMatchObject({ found: 119, added: 119, alreadyStored: 0 });
    expect(workos.requests.some((r) => r.includes('after=') && r.includes('events%5B%5D=user.updated'))).toBe(true);
    await drain(testWorker(testDb.db, { handlers: createDefaultHandlers({ providers: { payments: 'stripe', auth: 'workos' } }) }).worker);
    expect(await testDb.db.query(`SELECT count(*)::int AS n FROM hookrun.users WHERE provider = 'workos'`)).toEqual([{ n: 119 }]);
    expect(await run('workos', '5d')).toMatchObject({ found: 119, added: 0, alreadyStored: 119 });
  });

  it.each([
    [
      'paddle',
      401,
      /Paddle API answered 401: the key is wrong or lacks access \(GET \/events\): Authentication header included, but incorrectly formatted \(authentication_malformed\)/,
    ],
    ['paddle', 429, /Paddle API answered 429: rate limited, retry after 30 s .*IP address exceeded the allowed rate limit/],
    ['paddle', 500, /Paddle API answered 500 .*An internal error occurred/],
    ['workos', 401, /WorkOS API answered 401: .*Could not authorize the request. Maybe your API key is invalid\?/],
    ['workos', 429, /WorkOS API answered 429: rate limited.*Too many requests .*\(rate_limit_exceeded\)/],
    ['workos', 500, /WorkOS API answered 500 .*Internal Server Error/],
  ] as const)('%s answering %i on the second page: its own message; the first page is stored, and a rerun stores the rest', async (sender, status, message) => {
    paddle.events.push(...paddleEvents(250));
    workos.events.push(...workosEvents(150));
    (sender === 'paddle' ? paddle : workos).failNext(status, 1);
    const since = sender === 'paddle' ? '20d' : '10d';
    const error = await run(sender, since).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SenderApiError);
    expect((error as Error).message).toMatch(message);
    const [firstPage, all] = sender === 'paddle' ? [200, 250] : [100, 150];
    expect(await keys(sender === 'paddle' ? 'payments' : 'auth')).toHaveLength(firstPage);
    expect((error as Error).message).toMatch(`the ${firstPage} events listed before it are stored, ${firstPage} of them new; run it again for the rest`);
    expect(await run(sender, since)).toMatchObject({ found: all, added: all - firstPage, alreadyStored: firstPage });
  });

  it('a missing key names the variable; the wrong route provider says which switch to set', async () => {
    await expect(run('paddle', '3d', { PADDLE_API_KEY: undefined })).rejects.toThrow(/^PADDLE_API_KEY is not set/);
    await expect(run('paddle', '3d', { PAYMENTS_PROVIDER: undefined })).rejects.toThrow(/^PAYMENTS_PROVIDER is stripe, .*set PAYMENTS_PROVIDER=paddle/);
    await expect(run('workos', '3d', { WORKOS_API_KEY: undefined })).rejects.toThrow(/^WORKOS_API_KEY is not set/);
    await expect(run('workos', '3d', { AUTH_PROVIDER: 'clerk' })).rejects.toThrow(/^AUTH_PROVIDER is clerk, .*set AUTH_PROVIDER=workos/);
    expect(paddle.requests.length + workos.requests.length).toBe(0);
  });

  it('the reconcile-paddle and reconcile-workos jobs store what is missing', async () => {
    paddle.events.push(...paddleEvents(5));
    workos.events.push(...workosEvents(4));
    const jobs = new Map([...(await loadJobs())].filter(([name]) => name === 'reconcile-paddle' || name === 'reconcile-workos'));
    const harness = await createHarness(testDb.db, { jobs, env });
    harness.clock.set(Date.now());
    expect(await harness.cron.runJob('reconcile-paddle', 'cli')).toMatchObject({ status: 'succeeded' });
    expect(await harness.cron.runJob('reconcile-workos', 'cli')).toMatchObject({ status: 'succeeded' });
    expect([(await keys('payments')).length, (await keys('auth')).length]).toEqual([5, 4]);
    const failed = await (await createHarness(testDb.db, { jobs })).cron.runJob('reconcile-paddle', 'cli');
    expect(failed.error).toMatch(/PADDLE_API_KEY is not set/);
  });
});
