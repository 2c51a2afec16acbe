import { stringify } from 'lossless-json';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An answer of a fake API: status, JSON body, extra headers. */
export interface FakeAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** An outage or refusal a test asks for: the status and the provider's own error body. */
export type FakeFailure = 401 | 429 | 500;

/**
 * The common part of the local stand-ins for the senders' APIs (GitHub,
 * Paddle, WorkOS, Clerk): a loopback server, one bearer key, every request
 * recorded, and `failNext` to answer with the provider's documented error
 * body for 401, 429 or 500. Nothing leaves the machine.
 */
export abstract class FakeSenderApi {
  /** Each request's method and path with query, in arrival order. */
  readonly requests: string[] = [];
  /** Called with each request (as `requests` records it) before it is answered: a test looks at the database at that moment. */
  onRequest: ((request: string) => Promise<void>) | undefined;
  /** Answer the Nth request from now (0: the next) with this failure; later requests are healthy again. */
  private failure: { status: FakeFailure; after: number } | undefined;
  private server = createServer((req, res) => void this.handle(req, res));

  constructor(protected readonly key: string) {}

  /** Listen on a free loopback port; resolves to the base URL for `<PROVIDER>_API_BASE`. */
  async start(): Promise<string> {
    this.server.keepAliveTimeout = 120_000;
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** Fail one request: the next (`after` 0) or a later one (`after` 1: the second page). */
  failNext(status: FakeFailure, after = 0): void {
    this.failure = { status, after };
  }

  reset(): void {
    this.requests.length = 0;
    this.failure = undefined;
    this.onRequest = undefined;
  }

  /** The provider's error body for a status, as its API documents it. */
  protected abstract errorBody(status: number, message: string): unknown;
  /** Answer a request that passed the key check. */
  protected abstract route(method: string, url: URL, body: string): Promise<FakeAnswer> | FakeAnswer;

  protected error(status: number, message: string): FakeAnswer {
    return { status, body: this.errorBody(status, message), ...(status === 429 ? { headers: { 'retry-after': '30' } } : {}) };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.requests.push(`${req.method} ${req.url}`);
    await this.onRequest?.(`${req.method} ${req.url}`);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const answer = await this.answer(req, Buffer.concat(chunks).toString('utf8'));
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
    res.end(answer.body === undefined ? '' : stringify(answer.body)); // lossless-json: a LosslessNumber in a body is sent as its exact digits
  }

  private async answer(req: IncomingMessage, body: string): Promise<FakeAnswer> {
    if (req.headers.authorization !== `Bearer ${this.key}`) return this.error(401, 'the key is not the one the fake knows');
    if (this.failure && this.failure.after-- === 0) {
      const { status } = this.failure;
      this.failure = undefined;
      return this.error(status, status === 429 ? 'rate limit the test asked for' : 'an outage the test asked for');
    }
    return this.route(req.method ?? 'GET', new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`), body);
  }
}
