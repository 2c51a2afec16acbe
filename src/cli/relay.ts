import type { Config } from '../config/config.js';
import { type Source, SOURCES } from '../webhooks/providers/index.js';
import { isLoopbackHost } from '../config/values.js';

/** An event as the remote admin API hands it over: the stream's `data`, or `GET /api/events/:id`'s `event`. */
export interface RemoteEvent {
  id: number;
  source: string;
  key: string;
  type: string;
  receivedAt: string;
  payload: unknown;
}

/** What the local receiver answered. */
export interface LocalAnswer {
  status: number;
  text: string;
}

const DELIVERY_TIMEOUT_MS = 10_000;

/** The remote hookrun's admin API base: `https://api.example.com` and `…/api` both work. */
export function remoteApiBase(from: string): string {
  let url: URL;
  try {
    url = new URL(from);
  } catch {
    throw new Error(`--from "${from}" is not a URL: use the deployed hookrun's address, e.g. https://api.example.com`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`--from "${from}" must be http(s).`);
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new Error(
      `--from ${url.origin} would send the admin token unencrypted: use https://, or http:// only to this machine (127.0.0.0/8, ::1, localhost).`,
    );
  }
  return (
    url
      .toString()
      .replace(/\/+$/, '')
      .replace(/\/api$/, '') + '/api'
  );
}

/** Loopback hosts: where `listen` forwards without `--allow-remote-target`. */
export function isLoopbackUrl(url: string): boolean {
  return isLoopbackHost(new URL(url).hostname);
}

/**
 * Deliver a remote event to the local receiver the way its provider would:
 * the payload re-signed with the LOCAL secret (the remote's never reaches the
 * laptop), under the same idempotency key, so the local inbox stores it once
 * and the local handlers run on the real payload.
 */
export async function deliverLocally(event: RemoteEvent, config: Config, to: string): Promise<LocalAnswer> {
  if (!(SOURCES as readonly string[]).includes(event.source))
    throw new Error(`event ${event.id} has source "${event.source}", which this hookrun does not receive.`);
  const source = event.source as Source;
  const [{ encodeSample, signSample }, { providerFor }] = await Promise.all([import('../webhooks/samples.js'), import('../webhooks/providers/index.js')]);
  const url = `${to.replace(/\/+$/, '')}/webhooks/${source}`;
  // Encoded as the provider configured here posts it, the one signSample signs for.
  const body = encodeSample(source, event.payload as Record<string, unknown>, providerFor(config, source));
  const headers = signSample(source, body, config, { messageId: event.key, type: event.type, url });
  // An unsigned database delivery is keyed by Idempotency-Key (else every copy would be a new event).
  if (headers.authorization) headers['idempotency-key'] = event.key;
  headers['user-agent'] = 'hookrun-relay';
  const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS) });
  return { status: response.status, text: (await response.text()).slice(0, 300) };
}

/** One line per relayed event: time, source, type, key and what the local receiver said. */
export function relayLine(event: RemoteEvent, answer: LocalAnswer | Error): string {
  const outcome = answer instanceof Error ? `not delivered: ${answer.message}` : `${answer.status} ${answer.text}`;
  return `${event.receivedAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}  ${event.source}  ${event.type}  ${event.key}  → ${outcome}`;
}
