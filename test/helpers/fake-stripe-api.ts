import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SECRETS } from './config.js';

/** The secret key tests give hookrun (a test secret: the secret scan looks for it); the fake API refuses any other (401, as Stripe does). */
export const TEST_STRIPE_KEY = SECRETS.stripe;

type StripeObject = Record<string, unknown> & { id: string };

/**
 * A local stand-in for the few Stripe API endpoints hookrun calls, answering
 * in the shapes Stripe documents (https://docs.stripe.com/api): retrieve a
 * subscription or customer (404 `resource_missing` error object when unknown,
 * `{deleted: true}` for a deleted customer), an invoice or checkout session
 * (what a thin event's `related_object.url` names), the events list (newest
 * first, `created[gte]`, `types[]`, `limit`, `starting_after`, `has_more`),
 * and a v2 event (`GET /v2/core/events/:id`, a `v2.core.event`; 404
 * `not_found` when unknown, https://docs.stripe.com/api/v2/core/events/retrieve).
 * Connect as Stripe enforces it: an object of a connected account (`owners`)
 * is found only by a request that names that account (`Stripe-Account` or
 * `Stripe-Context`), a platform's object only by one that names none; any
 * other request gets the same 404 `resource_missing` as an unknown id.
 * https://docs.stripe.com/connect/authentication
 * Tests point stripe-node at it through STRIPE_API_BASE: nothing leaves the machine.
 */
export class FakeStripeApi {
  readonly subscriptions = new Map<string, StripeObject>();
  readonly customers = new Map<string, StripeObject | 'deleted'>();
  readonly invoices = new Map<string, StripeObject>();
  readonly checkoutSessions = new Map<string, StripeObject>();
  /** Full v2 events (`v2.core.event`) by id, for thin events' `fetchEvent`. */
  readonly v2Events = new Map<string, StripeObject>();
  /** Each request's `Stripe-Context` header (a thin event's `context`), or null, in arrival order. */
  readonly contexts: Array<string | null> = [];
  /** Each request's `Stripe-Account` header (a Connect event's `account`), or null, in arrival order. */
  readonly accounts: Array<string | null> = [];
  /** The connected account (`acct_…`) each object of one belongs to, by object id; an id not here is the platform's. */
  readonly owners = new Map<string, string>();
  /** Every event the account has, any order; listed newest first. */
  readonly events: StripeObject[] = [];
  /** Each request's method and path with query, in arrival order. */
  readonly requests: string[] = [];
  /** Answer the next N requests with this status (an outage); 0 = healthy. */
  failNext = 0;
  /** Answer every request as a server that does not serve this API would (a wrong STRIPE_API_BASE): 404, an error without `resource_missing`. */
  notStripe = false;
  private server = createServer((req, res) => this.answer(req, res));

  /** Listen on a free loopback port; resolves to the base URL for STRIPE_API_BASE. */
  async start(): Promise<string> {
    // Idle keep-alive sockets stay open for the whole test: a request racing the server's close of one would be retried by stripe-node.
    this.server.keepAliveTimeout = 120_000;
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  reset(): void {
    this.subscriptions.clear();
    this.customers.clear();
    this.invoices.clear();
    this.checkoutSessions.clear();
    this.v2Events.clear();
    this.contexts.length = 0;
    this.accounts.length = 0;
    this.owners.clear();
    this.events.length = 0;
    this.requests.length = 0;
    this.failNext = 0;
    this.notStripe = false;
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    this.requests.push(`${req.method} ${req.url}`);
    this.contexts.push((req.headers['stripe-context'] as string | undefined) ?? null);
    this.accounts.push((req.headers['stripe-account'] as string | undefined) ?? null);
    const account = this.accounts.at(-1) ?? this.contexts.at(-1) ?? null;
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${this.requests.length}` });
      res.end(JSON.stringify(body));
    };
    const error = (status: number, type: string, message: string, code?: string) => send(status, { error: { type, message, ...(code ? { code } : {}) } });
    if (req.headers.authorization !== `Bearer ${TEST_STRIPE_KEY}`) {
      return error(401, 'invalid_request_error', 'Invalid API Key provided: the fake API knows one key.');
    }
    if (this.failNext > 0) {
      this.failNext--;
      return error(500, 'api_error', 'Something went wrong on the fake API (an outage the test asked for).');
    }
    const url = new URL(req.url ?? '/', 'http://fake');
    if (this.notStripe) return error(404, 'invalid_request_error', `Unrecognized request URL (${req.method}: ${url.pathname}).`);
    const v2Event = /^\/v2\/core\/events\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && v2Event) {
      const event = this.v2Events.get(decodeURIComponent(v2Event[1]!));
      return event ? send(200, event) : error(404, 'not_found', `No such event: '${v2Event[1]}'`, 'not_found');
    }
    const path = url.pathname.replace('/v1/checkout/sessions/', '/v1/checkout_sessions/');
    const [, version, resource = '', id] = path.split('/');
    if (req.method !== 'GET' || version !== 'v1') return error(404, 'invalid_request_error', `Unrecognized request URL (${req.method}: ${url.pathname}).`);
    if (resource === 'events' && id === undefined) return send(200, this.listEvents(url.searchParams, account));
    const stores: Record<string, Map<string, StripeObject | 'deleted'>> = {
      subscriptions: this.subscriptions,
      customers: this.customers,
      invoices: this.invoices,
      checkout_sessions: this.checkoutSessions,
    };
    const store = stores[resource];
    if (!store || !id) return error(404, 'invalid_request_error', `Unrecognized request URL (GET: ${url.pathname}).`);
    const objectId = decodeURIComponent(id);
    const object = (this.owners.get(objectId) ?? null) === account ? store.get(objectId) : undefined;
    if (object === 'deleted') return send(200, { id, object: 'customer', deleted: true });
    if (!object) return error(404, 'invalid_request_error', `No such ${resource.slice(0, -1)}: '${id}'`, 'resource_missing');
    return send(200, object);
  }

  /** The events of the account the request names (a connected account's carry its `account`), or the platform's. */
  private listEvents(query: URLSearchParams, account: string | null) {
    const gte = Number(query.get('created[gte]') ?? 0);
    const types = [...query.entries()].filter(([k]) => /^types\[\d*\]$/.test(k)).map(([, v]) => v);
    const limit = Math.min(Number(query.get('limit') ?? 10), 100);
    let list = this.events
      .filter((e) => (e.account ?? null) === account)
      .filter((e) => (e.created as number) >= gte && (types.length === 0 || types.includes(e.type as string)))
      .sort((a, b) => (b.created as number) - (a.created as number) || b.id.localeCompare(a.id));
    const after = query.get('starting_after');
    if (after) list = list.slice(list.findIndex((e) => e.id === after) + 1);
    return { object: 'list', url: '/v1/events', has_more: list.length > limit, data: list.slice(0, limit) };
  }
}
