import { FakeSenderApi, type FakeAnswer } from './fake-sender-api.js';

/** CLERK_SECRET_KEY for the fake API (a test key: the secret scan looks for it). */
export const TEST_CLERK_KEY = 'sk_test_hookrunFakeClerkBackendKey';

/** A Clerk user or organization as the Backend API returns it (times in ms). */
export type ClerkObject = Record<string, unknown> & { id: string; updated_at: number };

/**
 * Clerk's Backend API, the two lists gap repair reads
 * (https://clerk.com/docs/reference/backend-api): `GET /v1/users` (a bare
 * array; `limit`, `offset`, `order_by=-updated_at`) and `GET /v1/organizations`
 * (`{data, total_count}`; `limit`, `offset`, newest created first). Errors
 * `{errors: [{message, long_message, code}], clerk_trace_id}`.
 */
export class FakeClerkApi extends FakeSenderApi {
  readonly users: ClerkObject[] = [];
  readonly organizations: ClerkObject[] = [];

  constructor() {
    super(TEST_CLERK_KEY);
  }

  override reset(): void {
    super.reset();
    this.users.length = 0;
    this.organizations.length = 0;
  }

  protected errorBody(status: number, message: string): unknown {
    const [short, long, code] =
      status === 401
        ? ['Invalid authentication', 'The provided Clerk Secret Key is invalid. Make sure that your Clerk Secret Key is correct.', 'authentication_invalid']
        : status === 429
          ? ['Too Many Requests', `You have exceeded the rate limit (${message}).`, 'too_many_requests']
          : ['Oops, an unexpected error occurred', `There was an internal error on our servers (${message}).`, 'internal_clerk_error'];
    return { errors: [{ message: short, long_message: long, code }], clerk_trace_id: 'trace_fake' };
  }

  protected route(method: string, url: URL): FakeAnswer {
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 10), 500);
    const offset = Number(url.searchParams.get('offset') ?? 0);
    if (method === 'GET' && url.pathname === '/v1/users') {
      const byUpdate = url.searchParams.get('order_by') === '-updated_at';
      const sorted = [...this.users].sort((a, b) => (byUpdate ? b.updated_at - a.updated_at : 0) || a.id.localeCompare(b.id));
      return { status: 200, body: sorted.slice(offset, offset + limit) };
    }
    if (method === 'GET' && url.pathname === '/v1/organizations') {
      const sorted = [...this.organizations].sort((a, b) => Number(b.created_at ?? 0) - Number(a.created_at ?? 0) || a.id.localeCompare(b.id));
      return { status: 200, body: { data: sorted.slice(offset, offset + limit), total_count: sorted.length } };
    }
    return { status: 404, body: { errors: [{ message: 'not found', long_message: `No route ${url.pathname}`, code: 'resource_not_found' }] } };
  }
}
