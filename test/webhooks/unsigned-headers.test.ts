import { createHmac, randomUUID } from 'node:crypto';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { beforeEach, describe, expect, it } from 'vitest';
import { EventWriter } from '../../src/db/event-writer.js';
import { bodyDigestOf } from '../../src/webhooks/delivery.js';
import { countEvents, createTestApp, type TestApp } from '../helpers/app.js';
import { SECRETS } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';

type Headers = Record<string, string>;

/**
 * GitHub and Shopify sign the body only: the delivery id and the event name
 * or topic are plain headers. A captured delivery must not be storable again
 * under a new id, nor re-typed.
 */
describe.each(databaseKinds())('unsigned ids and types (GitHub, Shopify) on $name', (kind) => {
  const tdb = useTestDatabase(kind);
  let t: TestApp;
  const post = (route: string, body: string, headers: Headers) => t.app.request(`/webhooks/${route}`, { method: 'POST', body, headers });
  const stored = (source: string) =>
    tdb.db.query<{ id: number; key: string; type: string }>('SELECT id, key, type FROM hookrun.webhook_events WHERE source = $1 ORDER BY id', [source]);
  const github = async (body: string, event: string, delivery: string = randomUUID()): Promise<Headers> => ({
    'content-type': 'application/json',
    'x-hub-signature-256': await githubSign(SECRETS.github, body),
    'x-github-delivery': delivery,
    'x-github-event': event,
  });
  const shopify = (body: string, topic: string, eventId: string = randomUUID()): Headers => ({
    'content-type': 'application/json',
    'x-shopify-hmac-sha256': createHmac('sha256', SECRETS.shopify).update(body).digest('base64'),
    'x-shopify-event-id': eventId,
    'x-shopify-topic': topic,
  });

  beforeEach(() => {
    t = createTestApp(tdb.db);
  });

  it('GitHub: a captured delivery replayed under new delivery ids is a duplicate of the first, however many times', async () => {
    const body = JSON.stringify({ action: 'opened', issue: { id: 1, number: 7 }, repository: { id: 9 } });
    const first = await (await post('github', body, await github(body, 'issues'))).json();
    expect(first).toMatchObject({ duplicate: false });
    for (let i = 0; i < 5; i++) expect(await (await post('github', body, await github(body, 'issues'))).json()).toMatchObject({ duplicate: true });
    // GitHub's own redelivery (same id) is still answered with the first event's id.
    const { key } = (await stored('github'))[0]!;
    expect(await (await post('github', body, await github(body, 'issues', key))).json()).toEqual({ received: true, id: first.id, duplicate: true });
    expect(await stored('github')).toHaveLength(1);
    // Another body is another event.
    const other = body.replace('"number":7', '"number":8');
    expect(await (await post('github', other, await github(other, 'issues'))).json()).toMatchObject({ duplicate: false });
  });

  it('GitHub: concurrent replays under new ids store one event', async () => {
    const body = JSON.stringify({ ref: 'refs/heads/main', pusher: { name: 'a' }, commits: [], after: 'f'.repeat(40) });
    const answers = await Promise.all(
      Array.from({ length: 8 }, async () => (await post('github', body, await github(body, 'push'))).json() as Promise<{ duplicate: boolean }>),
    );
    expect(answers.filter((a) => !a.duplicate)).toHaveLength(1);
    expect(await countEvents(tdb.db, 'github')).toBe(1);
  });

  it('GitHub: an event name the body contradicts is refused (a comment is not an issue, a pull request not a release)', async () => {
    const comment = JSON.stringify({ action: 'created', issue: { id: 1 }, comment: { id: 2, body: 'hi' } });
    const pull = JSON.stringify({ action: 'opened', pull_request: { id: 3 } });
    for (const [body, event] of [
      [comment, 'issues'],
      [pull, 'release'],
      [pull, 'issues'],
      [comment, 'pull_request'],
    ] as const) {
      const res = await post('github', body, await github(body, event));
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: 'invalid_payload', message: expect.stringContaining(`X-GitHub-Event says "${event}"`) } });
    }
    expect((await post('github', comment, await github(comment, 'issue_comment'))).status).toBe(200);
    expect((await stored('github')).map((e) => e.type)).toEqual(['issue_comment.created']);
  });

  it('Shopify: customers/create replayed under a new event id as customers/redact is a duplicate; the stored type stays', async () => {
    const body = JSON.stringify({ id: 706405506930370000, email: 'ada@example.com', first_name: 'Ada' });
    expect(await (await post('shopify', body, shopify(body, 'customers/create'))).json()).toMatchObject({ duplicate: false });
    for (const topic of ['customers/redact', 'customers/create', 'app/uninstalled']) {
      expect(await (await post('shopify', body, shopify(body, topic))).json()).toMatchObject({ duplicate: true });
    }
    expect((await stored('shopify')).map((e) => e.type)).toEqual(['customers/create']);
  });

  it('the body key is per source and in the same statement: two writers racing one body under two ids store it once; another source is unaffected', async () => {
    const body = JSON.stringify({ id: 1 });
    const digest = bodyDigestOf(Buffer.from(body));
    const writers = [new EventWriter(tdb.db), new EventWriter(tdb.db)];
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        writers[i % 2]!.write({ source: 'shopify', key: `e${i}`, type: 'orders/create', payloadJson: body, bodyDigest: digest }),
      ),
    );
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect((await writers[0]!.write({ source: 'github', key: 'e0', type: 'ping', payloadJson: body, bodyDigest: digest })).duplicate).toBe(false);
    expect((await writers[0]!.write({ source: 'github', key: 'e9', type: 'ping', payloadJson: body })).duplicate).toBe(false);
    expect(await tdb.db.query('SELECT source, key FROM hookrun.webhook_event_keys ORDER BY source')).toEqual([
      { source: 'github#body', key: digest },
      { source: 'shopify#body', key: digest },
    ]);
  });
});
