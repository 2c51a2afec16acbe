import { createHmac, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { sign as githubSign } from '@octokit/webhooks-methods';
import pino from 'pino';
import { beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { HandlerRegistry, type EventHandler } from '../../src/deliveries/registry.js';
import { getEvent, type EventDetail } from '../../src/db/events.js';
import { createAdminApi } from '../../src/http/admin.js';
import { buildApp } from '../../src/http/build-app.js';
import { eventDetailPage } from '../../src/http/console/events-detail.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { bodyDigestOf } from '../../src/webhooks/delivery.js';
import { SECRETS, testConfig } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { drain, testWorker } from '../inbox/fixtures.js';

type Headers = Record<string, string>;
type Answer = { received: boolean; id: number; duplicate: boolean };

/** GitHub's published example of an event (@octokit/webhooks-examples), as GitHub serialises it. */
function published(name: string, action: string): Record<string, unknown> {
  const definitions = createRequire(import.meta.url)('@octokit/webhooks-examples/api.github.com/index.json') as Array<{
    name: string;
    examples: Array<Record<string, unknown>>;
  }>;
  const example = definitions.find((d) => d.name === name)!.examples.find((e) => e.action === action);
  if (!example) throw new Error(`no published ${name}.${action}`);
  return example;
}

/**
 * A delivery is a duplicate only when its sender says it is the same one (its
 * delivery id); two genuine events can have byte-identical bodies. The body
 * digest only marks a suspected replay: stored, handled, counted, logged.
 */
describe.each(databaseKinds())('same body, new delivery id (GitHub, Shopify) on $name', (kind) => {
  const tdb = useTestDatabase(kind);
  let app: ReturnType<typeof buildApp>['app'];
  let metrics: Metrics;
  let logLines: string[];
  const post = async (route: string, body: string, headers: Headers): Promise<Answer> => {
    const res = await app.request(`/webhooks/${route}`, { method: 'POST', body, headers });
    expect(res.status).toBe(200);
    return (await res.json()) as Answer;
  };
  const github = async (body: string, event: string, delivery: string = randomUUID()): Promise<Headers> => ({
    'content-type': 'application/json',
    'x-hub-signature-256': await githubSign(SECRETS.github, body), // GitHub's own HMAC, from @octokit/webhooks-methods
    'x-github-delivery': delivery,
    'x-github-event': event,
  });
  const shopify = (body: string, topic: string, eventId: string = randomUUID()): Headers => ({
    'content-type': 'application/json',
    'x-shopify-hmac-sha256': createHmac('sha256', SECRETS.shopify).update(body).digest('base64'),
    'x-shopify-event-id': eventId,
    'x-shopify-topic': topic,
  });
  const stored = (source: string) =>
    tdb.db.query<{ id: number; key: string; type: string; status: string; same_body_as: number | null }>(
      'SELECT id::int AS id, key, type, status, same_body_as::int AS same_body_as FROM hookrun.webhook_events WHERE source = $1 ORDER BY id',
      [source],
    );
  const suspected = async (source: string) => (await metrics.suspectedReplays.get()).values.find((v) => v.labels.source === source)?.value ?? 0;
  /** `GET /api/events/:id` as the admin API answers it. */
  const apiEvent = async (id: number) => {
    const api = createAdminApi({
      config: { operators: [{ name: 'admin', role: 'operator', token: SECRETS.admin }] },
      db: tdb.db,
      clock: new ManualClock(Date.now()),
      cron: {} as never,
      log: silentLogger,
    });
    const res = await api.request(`/events/${id}`, { headers: { authorization: `Bearer ${SECRETS.admin}` } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { event: EventDetail }).event;
  };

  beforeEach(() => {
    metrics = new Metrics();
    logLines = [];
    const log = pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line) });
    ({ app } = buildApp({ config: testConfig(), db: tdb.db, clock: new ManualClock(Date.now()), log, metrics, writer: new EventWriter(tdb.db) }));
  });

  it('GitHub: block, unblock, block of one user are three events; the handler ends with the user blocked', async () => {
    const block = JSON.stringify(published('org_block', 'blocked'));
    const unblock = JSON.stringify({ ...published('org_block', 'blocked'), action: 'unblocked' });
    const answers = [];
    for (const body of [block, unblock, block]) answers.push(await post('github', body, await github(body, 'org_block')));
    expect(answers.map((a) => a.duplicate)).toEqual([false, false, false]);
    expect(new Set(answers.map((a) => a.id)).size).toBe(3);
    const rows = await stored('github');
    expect(rows.map((r) => [r.type, r.same_body_as])).toEqual([
      ['org_block.blocked', null],
      ['org_block.unblocked', null],
      ['org_block.blocked', answers[0]!.id],
    ]);

    // The handler sees each event once; applied in the order they came, the user ends blocked.
    const seen = new Map<number, string>();
    const handler: EventHandler = async ({ event }) => void seen.set(event.id, event.type);
    const handlers = new HandlerRegistry().on('github', 'org_block.blocked', handler).on('github', 'org_block.unblocked', handler);
    await drain(testWorker(tdb.db, { handlers }).worker);
    expect([...seen.entries()].sort(([a], [b]) => a - b)).toEqual([
      [answers[0]!.id, 'org_block.blocked'],
      [answers[1]!.id, 'org_block.unblocked'],
      [answers[2]!.id, 'org_block.blocked'],
    ]);
    expect((await stored('github')).map((r) => r.status)).toEqual(['processed', 'processed', 'processed']);
  });

  it('GitHub: a body first sent as fork and then as star is stored twice, each under its own type', async () => {
    const body = JSON.stringify(published('star', 'created'));
    const fork = await post('github', body, await github(body, 'fork'));
    const star = await post('github', body, await github(body, 'star'));
    expect([fork.duplicate, star.duplicate]).toEqual([false, false]);
    expect((await stored('github')).map((r) => [r.id, r.type, r.same_body_as])).toEqual([
      [fork.id, 'fork.created', null],
      [star.id, 'star.created', fork.id],
    ]);
  });

  it('Shopify: orders/create and orders/paid with one body are both stored and both handled', async () => {
    const body = JSON.stringify({ id: 820982911946154500, name: '#1001', financial_status: 'paid', total_price: '29.00' });
    const created = await post('shopify', body, shopify(body, 'orders/create'));
    const paid = await post('shopify', body, shopify(body, 'orders/paid'));
    expect([created.duplicate, paid.duplicate]).toEqual([false, false]);
    const handled: string[] = [];
    const handlers = new HandlerRegistry()
      .on('shopify', 'orders/create', async ({ event }) => void handled.push(event.type))
      .on('shopify', 'orders/paid', async ({ event }) => void handled.push(event.type));
    await drain(testWorker(tdb.db, { handlers }).worker);
    expect(handled.sort()).toEqual(['orders/create', 'orders/paid']);
    expect((await stored('shopify')).map((r) => [r.id, r.type, r.status])).toEqual([
      [created.id, 'orders/create', 'processed'],
      [paid.id, 'orders/paid', 'processed'],
    ]);
  });

  it("a retry under the same delivery id is a duplicate answering the stored event's id, however it comes", async () => {
    const body = JSON.stringify({ action: 'opened', issue: { id: 1, number: 7 }, repository: { id: 9 } });
    const delivery = randomUUID();
    const first = await post('github', body, await github(body, 'issues', delivery));
    expect(first.duplicate).toBe(false);
    expect(await post('github', body, await github(body, 'issues', delivery))).toEqual({ received: true, id: first.id, duplicate: true });
    const concurrent = await Promise.all(Array.from({ length: 4 }, async () => post('github', body, await github(body, 'issues', delivery))));
    expect(concurrent).toEqual(Array.from({ length: 4 }, () => ({ received: true, id: first.id, duplicate: true })));
    // In one batch: the first of a key is stored, the others answer its id.
    const topic = randomUUID();
    const batch = await Promise.all(Array.from({ length: 3 }, () => post('shopify', body, shopify(body, 'orders/create', topic))));
    expect(batch.filter((a) => !a.duplicate)).toHaveLength(1);
    expect(new Set(batch.map((a) => a.id)).size).toBe(1);
    expect(batch[0]!.id).toBeGreaterThan(0);
    // A key retention kept while its event is still there (a replay stopped the deletion) answers the event's id…
    await tdb.db.query(`INSERT INTO hookrun.webhook_event_keys (source, key, received_at) VALUES ('github', $1, now())`, [delivery]);
    expect(await post('github', body, await github(body, 'issues', delivery))).toEqual({ received: true, id: first.id, duplicate: true });
    // …and 0 once the event is deleted: no row is left to name.
    await tdb.db.query('DELETE FROM hookrun.webhook_events WHERE id = $1', [first.id]);
    expect(await post('github', body, await github(body, 'issues', delivery))).toEqual({ received: true, id: 0, duplicate: true });
    expect(await suspected('github')).toBe(0);
  });

  it('a replay under new ids is stored, marked with the first event, counted and logged without its body', async () => {
    const body = JSON.stringify({ action: 'opened', issue: { id: 1, number: 7, title: 'secret-ish title' }, repository: { id: 9 } });
    const first = await post('github', body, await github(body, 'issues'));
    const replays = [];
    for (let i = 0; i < 3; i++) replays.push(await post('github', body, await github(body, 'issues')));
    const concurrent = await Promise.all(Array.from({ length: 4 }, async () => post('github', body, await github(body, 'issues'))));
    expect([...replays, ...concurrent].every((a) => !a.duplicate && a.id > first.id)).toBe(true);
    expect((await stored('github')).map((r) => r.same_body_as)).toEqual([null, ...Array.from({ length: 7 }, () => first.id)]);
    expect(await suspected('github')).toBe(7);
    expect(await apiEvent(replays[0]!.id)).toMatchObject({ sameBodyAs: first.id });
    expect(await apiEvent(first.id)).toMatchObject({ sameBodyAs: null });
    const view = { attempts: [], deliveries: [], request: null, handlers: [], maxAttempts: undefined, csrf: 'c', now: Date.now() };
    const page = eventDetailPage({ ...view, event: (await getEvent(tdb.db, replays[0]!.id))! });
    expect(page).toContain(`<a href="/admin/events/${first.id}">event #${first.id}</a>`);
    expect(eventDetailPage({ ...view, event: (await getEvent(tdb.db, first.id))! })).not.toContain('same-body-as');
    const warnings = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.level === 40);
    expect(warnings).toHaveLength(7);
    expect(warnings[0]).toMatchObject({ source: 'github', id: replays[0]!.id, sameBodyAs: first.id, type: 'issues.opened' });
    expect(logLines.join('\n')).not.toContain('secret-ish title');
    // Another body is not a replay.
    const other = body.replace('"number":7', '"number":8');
    await post('github', other, await github(other, 'issues'));
    expect(await suspected('github')).toBe(7);
  });

  it('two writers racing one body under six ids store six events, five marked with the first; a body is per source', async () => {
    const body = JSON.stringify({ id: 1 });
    const digest = bodyDigestOf(Buffer.from(body));
    const writers = [new EventWriter(tdb.db), new EventWriter(tdb.db)];
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        writers[i % 2]!.write({ source: 'shopify', key: `e${i}`, type: 'orders/create', payloadJson: body, bodyDigest: digest }),
      ),
    );
    expect(results.every((r) => !r.duplicate)).toBe(true);
    const rows = await stored('shopify');
    expect(rows).toHaveLength(6);
    const [firstRow] = await tdb.db.query<{ event_id: number }>(
      `SELECT event_id::int AS event_id FROM hookrun.webhook_event_keys WHERE source = 'shopify#body'`,
    );
    expect(rows.filter((r) => r.same_body_as === null).map((r) => r.id)).toEqual([firstRow!.event_id]);
    expect(rows.filter((r) => r.same_body_as !== null).every((r) => r.same_body_as === firstRow!.event_id)).toBe(true);
    expect(results.filter((r) => r.sameBodyAs === firstRow!.event_id)).toHaveLength(5);
    const github = await writers[0]!.write({ source: 'github', key: 'e0', type: 'ping', payloadJson: body, bodyDigest: digest });
    expect(github).toEqual({ id: expect.any(Number), duplicate: false });
  });

  it.runIf(kind.name === 'postgres')('an event whose body another writer claims while its insert runs is marked once that one commits', async () => {
    const body = JSON.stringify({ id: 2 });
    const digest = bodyDigestOf(Buffer.from(body));
    const writer = new EventWriter(tdb.db);
    const first = await writer.write({ source: 'shopify', key: 'first', type: 'orders/create', payloadJson: body });
    let racing: Promise<Awaited<ReturnType<EventWriter['write']>>> | undefined;
    await tdb.db.transaction(async (tx) => {
      // Another writer's statement, not yet committed: it claimed the body for `first`.
      await tx.query(`INSERT INTO hookrun.webhook_event_keys (source, key, received_at, event_id) VALUES ('shopify#body', $1, now(), $2)`, [digest, first.id]);
      racing = writer.write({ source: 'shopify', key: 'second', type: 'orders/paid', payloadJson: body, bodyDigest: digest });
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
    const second = await racing!;
    expect(second).toEqual({ id: expect.any(Number), duplicate: false, sameBodyAs: first.id });
    expect((await stored('shopify')).map((r) => [r.key, r.same_body_as])).toEqual([
      ['first', null],
      ['second', first.id],
    ]);
  });
});
