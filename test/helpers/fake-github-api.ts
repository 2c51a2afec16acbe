import { sign } from '@octokit/webhooks-methods';
import { FakeSenderApi, type FakeAnswer } from './fake-sender-api.js';
import type { GithubDelivery } from '../../src/reconcile/github.js';

/** GITHUB_TOKEN for the fake API (a test token: the secret scan looks for it). */
export const TEST_GITHUB_TOKEN = 'ghp_hookrunFakeApiTokenForTests0000000000';

/** One delivery attempt as GitHub records it (the list's fields, the type hookrun reads), with the body it sent. */
export interface FakeDelivery extends GithubDelivery {
  payload: Record<string, unknown>;
}

/**
 * A local stand-in for GitHub's webhook deliveries API
 * (https://docs.github.com/en/rest/repos/webhooks#list-deliveries-for-a-repository-webhook):
 * the list newest first, `per_page` and a `cursor` in the Link header; a
 * redelivery (`POST …/deliveries/{id}/attempts`, 202) that really POSTs the
 * delivery, signed with @octokit/webhooks-methods under the webhook secret,
 * to `target` (a running hookrun), and records it as a new attempt with the
 * same GUID. Errors in GitHub's shape: `{message, documentation_url}`.
 */
export class FakeGithubApi extends FakeSenderApi {
  readonly deliveries: FakeDelivery[] = [];
  /** Where a redelivery is POSTed: `http://127.0.0.1:<port>/webhooks/github`. */
  target: string | undefined;
  private nextId = 1_000_000;

  constructor(
    private readonly hookPath: string,
    private readonly webhookSecret: string,
  ) {
    super(TEST_GITHUB_TOKEN);
  }

  /** Record a delivery GitHub made (or failed to make) at `at`. */
  add(guid: string, at: Date, event: string, payload: Record<string, unknown>, statusCode = 200): FakeDelivery {
    const delivery: FakeDelivery = {
      id: this.nextId++,
      guid,
      delivered_at: at.toISOString(),
      redelivery: false,
      status: statusCode === 200 ? 'OK' : `Invalid HTTP Response: ${statusCode}`,
      status_code: statusCode,
      event,
      action: typeof payload.action === 'string' ? payload.action : null,
      payload,
    };
    this.deliveries.push(delivery);
    return delivery;
  }

  override reset(): void {
    super.reset();
    this.deliveries.length = 0;
  }

  protected errorBody(status: number, message: string): unknown {
    const said = status === 401 ? 'Bad credentials' : status === 429 ? `API rate limit exceeded: ${message}` : `Server Error: ${message}`;
    return { message: said, documentation_url: 'https://docs.github.com/rest', status: String(status) };
  }

  protected async route(method: string, url: URL): Promise<FakeAnswer> {
    const list = `${this.hookPath}/deliveries`;
    if (method === 'GET' && url.pathname === list) return this.list(url);
    const attempt = new RegExp(`^${list}/(\\d+)/attempts$`).exec(url.pathname);
    if (method === 'POST' && attempt) return this.redeliver(Number(attempt[1]));
    return { status: 404, body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' } };
  }

  private list(url: URL): FakeAnswer {
    const perPage = Math.min(Number(url.searchParams.get('per_page') ?? 30), 100);
    const sorted = [...this.deliveries].sort((a, b) => b.delivered_at.localeCompare(a.delivered_at) || b.id - a.id);
    const cursor = url.searchParams.get('cursor');
    const start = cursor ? sorted.findIndex((d) => String(d.id) === cursor) + 1 : 0;
    const page = sorted.slice(start, start + perPage);
    const headers: Record<string, string> = {};
    if (start + perPage < sorted.length) {
      const next = new URL(url.href);
      next.searchParams.set('cursor', String(page[page.length - 1]!.id));
      headers.link = `<${next.href}>; rel="next"`;
    }
    return { status: 200, body: page.map(({ payload: _payload, ...rest }) => rest), headers };
  }

  private async redeliver(id: number): Promise<FakeAnswer> {
    const original = this.deliveries.find((d) => d.id === id);
    if (!original) return { status: 404, body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' } };
    if (!this.target) throw new Error('FakeGithubApi.target is not set: nowhere to redeliver to');
    const body = JSON.stringify(original.payload);
    // GitHub answers 202 and sends later; the fake sends first, so a test reads the stored row right after.
    const res = await fetch(this.target, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        'x-github-delivery': original.guid,
        'x-github-event': original.event,
        'x-hub-signature-256': await sign(this.webhookSecret, body),
        'user-agent': 'GitHub-Hookshot/fake',
      },
    });
    await res.text();
    this.add(original.guid, new Date(), original.event, original.payload, res.status).redelivery = true;
    return { status: 202, body: {} };
  }
}
