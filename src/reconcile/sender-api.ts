import { parseExactJson } from '../db/stored-payload.js';

/** Each request's limit: a sender API that hangs fails the reconcile instead of holding it (and a job's run) open. */
const REQUEST_TIMEOUT_MS = 15_000;
/** At most this much of a non-JSON error body goes into a message. */
const MAX_BODY_TEXT = 300;

/**
 * A sender's API did not answer 2xx (401 bad key, 429 rate limit, 500
 * outage, …), or not in time: the message is the provider's own, read from its
 * error body, so an operator sees what the provider says is wrong.
 */
export class SenderApiError extends Error {
  constructor(
    readonly provider: string,
    readonly status: number | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'SenderApiError';
  }
}

/** One sender API: its name in messages, how it authenticates and where its error body keeps the message. */
export interface SenderApiClient {
  provider: string;
  headers: Record<string, string>;
  /** The provider's own message in its error JSON, or undefined when the body has none. */
  errorMessage(body: unknown): string | undefined;
}

/** A parsed 2xx answer with the response headers (GitHub pages through its Link header). */
export interface SenderResponse<T> {
  body: T;
  headers: Headers;
}

function describeStatus(status: number, retryAfter: string | null): string {
  if (status === 401 || status === 403) return `${status}: the key is wrong or lacks access`;
  if (status === 429) return `429: rate limited${retryAfter ? `, retry after ${retryAfter} s` : ''}`;
  return String(status);
}

/**
 * Call a sender API and parse its JSON; any non-2xx, a timeout or a body that
 * is not JSON throws a SenderApiError naming the provider and quoting its message.
 */
export async function callSenderApi<T>(
  client: SenderApiClient,
  method: 'GET' | 'POST',
  url: URL,
  options: { signal?: AbortSignal; body?: unknown } = {},
): Promise<SenderResponse<T>> {
  const signal = options.signal ? AbortSignal.any([options.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]) : AbortSignal.timeout(REQUEST_TIMEOUT_MS);
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      method,
      signal,
      headers: {
        accept: 'application/json',
        'user-agent': 'hookrun',
        ...client.headers,
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    text = await response.text();
  } catch (error) {
    options.signal?.throwIfAborted();
    throw new SenderApiError(client.provider, undefined, `${client.provider} API at ${url.origin} did not answer: ${(error as Error).message}`);
  }
  let body: unknown;
  try {
    body = text === '' ? undefined : parseExactJson(text);
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const said = client.errorMessage(body) ?? (text.trim().slice(0, MAX_BODY_TEXT) || 'no message');
    throw new SenderApiError(
      client.provider,
      response.status,
      `${client.provider} API answered ${describeStatus(response.status, response.headers.get('retry-after'))} (${method} ${url.pathname}): ${said}`,
    );
  }
  if (body === undefined && text !== '')
    throw new SenderApiError(
      client.provider,
      response.status,
      `${client.provider} API answered ${response.status} with a body that is not JSON (${url.pathname}).`,
    );
  return { body: body as T, headers: response.headers };
}

/** A page link the API handed back, followed only to the configured base: the key is never sent to another host. */
export function sameOriginLink(next: string, base: URL, provider: string): URL {
  const url = new URL(next, base);
  if (url.origin !== base.origin)
    throw new SenderApiError(provider, undefined, `${provider} API pointed the next page at ${url.origin}, not ${base.origin}: refused.`);
  return url;
}

/** `base` + path, keeping a base's own path (GitHub Enterprise's `/api/v3`). */
export function apiUrl(base: URL, path: string, query: Record<string, string | readonly string[]> = {}): URL {
  const url = new URL(base.href);
  url.pathname = `${base.pathname.replace(/\/+$/, '')}${path}`;
  for (const [name, value] of Object.entries(query)) for (const one of typeof value === 'string' ? [value] : value) url.searchParams.append(name, one);
  return url;
}
