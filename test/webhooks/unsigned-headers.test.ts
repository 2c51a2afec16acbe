import { randomUUID } from 'node:crypto';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { beforeEach, describe, expect, it } from 'vitest';
import { countEvents, createTestApp, type TestApp } from '../helpers/app.js';
import { SECRETS } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';

type Headers = Record<string, string>;

/**
 * GitHub and Shopify sign the body only: the delivery id and the event name
 * or topic are plain headers. The delivery id alone makes a duplicate (two
 * genuine events can share a body: same-body.test.ts); GitHub's event name
 * must agree with the body's shape.
 */
describe.each(databaseKinds())('unsigned delivery ids and event names (GitHub) on $name', (kind) => {
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

  beforeEach(() => {
    t = createTestApp(tdb.db);
  });

  it('GitHub: a captured delivery replayed under new delivery ids is stored each time, marked with the first (never dropped)', async () => {
    const body = JSON.stringify({ action: 'opened', issue: { id: 1, number: 7 }, repository: { id: 9 } });
    const first = await (await post('github', body, await github(body, 'issues'))).json();
    expect(first).toMatchObject({ duplicate: false });
    for (let i = 0; i < 5; i++) expect(await (await post('github', body, await github(body, 'issues'))).json()).toMatchObject({ duplicate: false });
    // GitHub's own redelivery (same id) is answered with the first event's id.
    const { key } = (await stored('github'))[0]!;
    expect(await (await post('github', body, await github(body, 'issues', key))).json()).toEqual({ received: true, id: first.id, duplicate: true });
    expect(await stored('github')).toHaveLength(6);
    const marks = await tdb.db.query<{ n: number }>('SELECT count(*)::int AS n FROM hookrun.webhook_events WHERE same_body_as = $1', [first.id]);
    expect(marks[0]!.n).toBe(5);
  });

  it('GitHub: concurrent deliveries of one body under new ids are all stored', async () => {
    const body = JSON.stringify({ ref: 'refs/heads/main', pusher: { name: 'a' }, commits: [], after: 'f'.repeat(40) });
    const answers = await Promise.all(
      Array.from({ length: 8 }, async () => (await post('github', body, await github(body, 'push'))).json() as Promise<{ duplicate: boolean }>),
    );
    expect(answers.filter((a) => !a.duplicate)).toHaveLength(8);
    expect(await countEvents(tdb.db, 'github')).toBe(8);
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
});
