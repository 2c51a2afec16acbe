import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadJobs } from '../../src/cron/registry.js';
import { reconcileWindowStart } from '../../src/cron/reconcile-sender-job.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { hookPath, nextLink } from '../../src/reconcile/github.js';
import { parseSenderSince, SENDER_RECONCILES } from '../../src/reconcile/senders.js';
import { SenderApiError } from '../../src/reconcile/sender-api.js';
import { createTestApp } from '../helpers/app.js';
import { SECRETS, testConfig } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { FakeGithubApi, TEST_GITHUB_TOKEN } from '../helpers/fake-github-api.js';
import { createHarness } from '../cron/support.js';
import { createToolsApp } from '../tools/tools-app.js';

const HOUR = 3_600_000;
const HOOK = '/repos/acme/shop/hooks/42';

const issue = (n: number) => ({
  action: 'opened',
  issue: { number: n, title: `Issue ${n}` },
  repository: { full_name: 'acme/shop' },
  sender: { login: 'octocat' },
});

describe('GitHub gap repair settings', () => {
  it('reads GITHUB_HOOK for a repository or an organization, and refuses what it cannot use', () => {
    expect(hookPath(testConfig({ GITHUB_HOOK: 'acme/shop/42' }).senderApis.github.hook!)).toBe('/repos/acme/shop/hooks/42');
    expect(hookPath(testConfig({ GITHUB_HOOK: 'org/acme/7' }).senderApis.github.hook!)).toBe('/orgs/acme/hooks/7');
    expect(() => testConfig({ GITHUB_HOOK: 'acme/42' })).toThrow(/GITHUB_HOOK="acme\/42" is not valid: use owner\/repo\/123456789/);
    expect(() => testConfig({ GITHUB_API_BASE: 'http://ghe.example.com/api/v3' })).toThrow(/would send GITHUB_TOKEN unencrypted/);
    expect(testConfig({ GITHUB_API_BASE: 'https://ghe.example.com/api/v3/' }).senderApis.github.apiBase.href).toBe('https://ghe.example.com/api/v3');
    expect(nextLink('<https://api.github.com/x?cursor=v1_9>; rel="next", <https://api.github.com/x>; rel="first"')).toBe(
      'https://api.github.com/x?cursor=v1_9',
    );
  });

  it('refuses --since older than GitHub redelivers (3 days); the job looks back 3 days less a margin', () => {
    const now = Date.UTC(2026, 10, 23, 12);
    expect(parseSenderSince('github', '3d', now).getTime()).toBe(now - 72 * HOUR);
    expect(() => parseSenderSince('github', '4d', now)).toThrow(/more than 3 days ago: GitHub redelivers a webhook delivery only within 3 days/);
    expect(reconcileWindowStart('github', now, undefined).getTime()).toBe(now - 72 * HOUR + 10 * 60_000);
    expect(reconcileWindowStart('github', now, now - HOUR).getTime()).toBe(now - 72 * HOUR + 10 * 60_000);
    expect(reconcileWindowStart('clerk', now, undefined).getTime()).toBe(now - 72 * HOUR);
    expect(reconcileWindowStart('clerk', now, now - 10 * 24 * HOUR).getTime()).toBe(now - 10 * 24 * HOUR - HOUR); // since the last success, an hour of overlap
    expect(reconcileWindowStart('workos', now, now - 40 * 24 * HOUR).getTime()).toBe(now - 30 * 24 * HOUR + 10 * 60_000);
  });
});

describe.each(databaseKinds())('reconcile github on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  const api = new FakeGithubApi(HOOK, SECRETS.github);
  let server: Server;
  let env: Record<string, string>;
  const guids = async () =>
    (await testDb.db.query<{ key: string }>(`SELECT key FROM hookrun.webhook_events WHERE source = 'github' ORDER BY key`)).map((r) => r.key);
  const run = (since = '3d', overrides: Record<string, string | undefined> = {}) =>
    SENDER_RECONCILES.github.run({
      config: testConfig({ ...env, ...overrides }),
      db: testDb.db,
      writer: new EventWriter(testDb.db),
      since: parseSenderSince('github', since, Date.now()),
    });

  beforeAll(async () => {
    env = { GITHUB_TOKEN: TEST_GITHUB_TOKEN, GITHUB_HOOK: 'acme/shop/42', GITHUB_API_BASE: await api.start() };
    server = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: createTestApp(testDb.db).app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server)) as Server;
    });
    api.target = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/github`;
  });
  afterAll(async () => {
    await api.close();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => api.reset());

  /** `count` deliveries, one every 30 min back from now; every third already stored (delivered before the outage). */
  async function history(count: number) {
    const writer = new EventWriter(testDb.db);
    const made = Array.from({ length: count }, (_, i) => {
      const guid = `0b1c${String(i).padStart(4, '0')}-0000-11ee-8000-000000000000`;
      return api.add(guid, new Date(Date.now() - (i + 1) * 30 * 60_000), 'issues', issue(i), i % 3 === 0 ? 200 : 502);
    });
    for (const d of made.filter((_, i) => i % 3 === 0))
      await writer.write({ source: 'github', key: d.guid, type: 'issues.opened', payloadJson: JSON.stringify(d.payload) });
    return made;
  }

  it('asks GitHub to redeliver exactly what the inbox misses (paged); the signed redeliveries are stored; a second run asks for nothing', async () => {
    const made = await history(160); // 80 h back: the last 72 h hold 143 of them
    const inWindow = made.filter((d) => Date.parse(d.delivered_at) >= Date.now() - 72 * HOUR + 60_000);
    const stored = inWindow.filter((_, i) => i % 3 === 0).length;
    const first = await run();
    expect(first).toMatchObject({ found: inWindow.length, added: inWindow.length - stored, alreadyStored: stored });
    expect(first.addedIds[0]).toBe(inWindow.filter((_, i) => i % 3 !== 0).at(-1)!.guid); // oldest first
    expect(await guids()).toEqual(expect.arrayContaining(inWindow.map((d) => d.guid)));
    expect((await guids()).length).toBe(inWindow.length + made.filter((d, i) => i % 3 === 0 && !inWindow.includes(d)).length);
    expect(api.requests.some((r) => r.includes('cursor='))).toBe(true);
    const [type] = await testDb.db.query<{ type: string }>(`SELECT type FROM hookrun.webhook_events WHERE key = $1`, [first.addedIds[0]]);
    expect(type).toEqual({ type: 'issues.opened' });

    api.requests.length = 0;
    const second = await run();
    expect(second).toMatchObject({ found: inWindow.length, added: 0, alreadyStored: inWindow.length });
    expect(api.requests.filter((r) => r.startsWith('POST'))).toEqual([]);
  });

  it.each([401, 429, 500] as const)('GitHub answering %i on the second page: the error says what GitHub said, nothing is redelivered', async (status) => {
    await history(130);
    api.failNext(status, 1);
    const error = (await run().catch((e: unknown) => e)) as SenderApiError;
    expect(error).toBeInstanceOf(SenderApiError);
    expect(error.message).toMatch(
      { 401: /GitHub API answered 401.*Bad credentials/, 429: /429: rate limited, retry after 30 s.*API rate limit exceeded/, 500: /500.*Server Error/ }[
        status
      ],
    );
    expect(api.requests.filter((r) => r.startsWith('POST'))).toEqual([]);
    expect(await guids()).toHaveLength(Math.ceil(130 / 3));
  });

  it("a wrong token is refused with GitHub's message; a missing GITHUB_TOKEN or GITHUB_HOOK names the variable", async () => {
    await expect(run('3d', { GITHUB_TOKEN: 'ghp_wrong' })).rejects.toThrow(
      /GitHub API answered 401: the key is wrong or lacks access \(GET \/repos\/acme\/shop\/hooks\/42\/deliveries\): Bad credentials/,
    );
    await expect(run('3d', { GITHUB_TOKEN: undefined })).rejects.toThrow(/^GITHUB_TOKEN is not set/);
    await expect(run('3d', { GITHUB_HOOK: undefined })).rejects.toThrow(/^GITHUB_HOOK is not set/);
  });

  it('the reconcile-github job redelivers what is missing; without GITHUB_TOKEN its run fails and says why', async () => {
    await history(6);
    const jobs = new Map([...(await loadJobs())].filter(([name]) => name === 'reconcile-github'));
    const harness = await createHarness(testDb.db, { jobs, env });
    harness.clock.set(Date.now());
    expect(await harness.cron.runJob('reconcile-github', 'cli')).toMatchObject({ status: 'succeeded' });
    expect(await guids()).toHaveLength(6);
    const failed = await (await createHarness(testDb.db, { jobs })).cron.runJob('reconcile-github', 'cli');
    expect(failed).toMatchObject({ status: 'failed' });
    expect(failed.error).toMatch(/GITHUB_TOKEN is not set/);
  });

  it("POST /api/reconcile/github: 503 naming GITHUB_TOKEN, 400 past 3 days, 503 with GitHub's message, the summary", async () => {
    await history(3);
    const post = async (e: Record<string, string>, since: string) => {
      const tools = await createToolsApp(testDb.db, e);
      tools.clock.set(Date.now());
      const headers = { authorization: `Bearer ${SECRETS.admin}`, 'content-type': 'application/json' };
      const res = await tools.app.request('/api/reconcile/github', { method: 'POST', headers, body: JSON.stringify({ since }) });
      return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string }; added?: number } };
    };
    const closed = await post({}, '3d');
    expect([closed.status, closed.body.error?.code, closed.body.error?.message]).toEqual([
      503,
      'not_configured',
      expect.stringMatching(/^GITHUB_TOKEN is not set/),
    ]);
    expect((await post(env, '5d')).body.error?.code).toBe('bad_request');
    const refused = await post({ ...env, GITHUB_TOKEN: 'ghp_wrong' }, '3d');
    expect([refused.status, refused.body.error?.message]).toEqual([503, expect.stringMatching(/Bad credentials/)]);
    const ok = await post(env, '3d');
    expect([ok.status, ok.body.added]).toEqual([200, 2]);
  });
});
