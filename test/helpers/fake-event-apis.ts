import { FakeSenderApi, type FakeAnswer } from './fake-sender-api.js';

/** PADDLE_API_KEY and WORKOS_API_KEY for the fake APIs (test keys: the secret scan looks for them). */
export const TEST_PADDLE_KEY = 'pdl_sdbx_apikey_hookrunfakeapikeyfortests';
export const TEST_WORKOS_KEY = 'sk_test_hookrun_fake_workos_key';

type Json = Record<string, unknown>;

/**
 * Paddle Billing's events list (https://developer.paddle.com/api-reference/events/list-events):
 * `order_by=id[ASC|DESC]`, `per_page`, `event_type` (comma-separated), `after`
 * (an event id); `{data, meta: {request_id, pagination: {per_page, next, has_more, estimated_total}}}`.
 * Errors `{error: {type, code, detail, documentation_url}, meta}`.
 */
export class FakePaddleApi extends FakeSenderApi {
  /** Every event the account has, any order (ids sort by time, as Paddle's do). */
  readonly events: Array<Json & { event_id: string; event_type: string; occurred_at: string }> = [];

  constructor() {
    super(TEST_PADDLE_KEY);
  }

  override reset(): void {
    super.reset();
    this.events.length = 0;
  }

  protected errorBody(status: number, message: string): unknown {
    const [type, code, detail] =
      status === 401
        ? ['request_error', 'authentication_malformed', 'Authentication header included, but incorrectly formatted']
        : status === 429
          ? ['request_error', 'too_many_requests', `IP address exceeded the allowed rate limit (${message})`]
          : ['api_error', 'internal_error', `An internal error occurred (${message})`];
    return { error: { type, code, detail, documentation_url: `https://developer.paddle.com/errors/shared/${code}` }, meta: { request_id: 'req_fake' } };
  }

  protected route(method: string, url: URL): FakeAnswer {
    if (method !== 'GET' || url.pathname !== '/events') return this.error(404, 'not found');
    const types = url.searchParams.get('event_type')?.split(',');
    const desc = url.searchParams.get('order_by') === 'id[DESC]';
    const perPage = Math.min(Number(url.searchParams.get('per_page') ?? 50), 200);
    let list = this.events.filter((e) => !types || types.includes(e.event_type)).sort((a, b) => a.event_id.localeCompare(b.event_id) * (desc ? -1 : 1));
    const after = url.searchParams.get('after');
    if (after) list = list.filter((e) => (desc ? e.event_id < after : e.event_id > after));
    const page = list.slice(0, perPage);
    const next = new URL(url.href);
    if (page.length > 0) next.searchParams.set('after', page[page.length - 1]!.event_id);
    const pagination = { per_page: perPage, next: next.href, has_more: list.length > perPage, estimated_total: list.length };
    return { status: 200, body: { data: page, meta: { request_id: 'req_fake', pagination } } };
  }
}

/**
 * WorkOS's events list (https://workos.com/docs/reference/events/list):
 * `events[]` (required), `range_start`, `limit`, `after` (an event id);
 * `{object: 'list', data, list_metadata: {after}}`, oldest first. Errors `{message, code}`.
 */
export class FakeWorkosApi extends FakeSenderApi {
  readonly events: Array<Json & { id: string; event: string; created_at: string }> = [];

  constructor() {
    super(TEST_WORKOS_KEY);
  }

  override reset(): void {
    super.reset();
    this.events.length = 0;
  }

  protected errorBody(status: number, message: string): unknown {
    if (status === 401) return { message: 'Could not authorize the request. Maybe your API key is invalid?' };
    if (status === 429) return { message: `Too many requests (${message})`, code: 'rate_limit_exceeded' };
    return { message: `Internal Server Error (${message})` };
  }

  protected route(method: string, url: URL): FakeAnswer {
    if (method !== 'GET' || url.pathname !== '/events') return this.error(404, 'not found');
    const types = url.searchParams.getAll('events[]');
    if (types.length === 0) return { status: 422, body: { message: 'Validation failed', code: 'invalid_request_parameters' } };
    const start = url.searchParams.get('range_start') ?? '';
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 10), 100);
    let list = this.events.filter((e) => types.includes(e.event) && e.created_at >= start).sort((a, b) => a.id.localeCompare(b.id));
    const after = url.searchParams.get('after');
    if (after) list = list.filter((e) => e.id > after);
    const page = list.slice(0, limit);
    return { status: 200, body: { object: 'list', data: page, list_metadata: { after: list.length > limit ? page[page.length - 1]!.id : null } } };
  }
}
