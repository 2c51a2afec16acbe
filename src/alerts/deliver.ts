import { hostname } from 'node:os';

/** The user agent of every alert, so the receiving end can tell hookrun's messages apart. */
export const ALERT_USER_AGENT = 'hookrun-alerts/1';

/** An alert a destination did not take; the message never contains the URL or a key (they are credentials). */
export class AlertDeliveryError extends Error {
  constructor(
    message: string,
    /** A 4xx other than 408/429: sending it again will not help. */
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

/** One line naming this instance, so a message from one of many instances says where it came from. */
export function alertHeading(text: string): string {
  return `hookrun (${hostname()}): ${text}`;
}

/** This instance, as incident tools name an alert's source. */
export const alertSource = () => `hookrun (${hostname()})`;

/** One HTTP request to a destination, built once per message: its retries are the same request (the same `webhook-id`, so a receiver drops a repeat). */
export interface AlertRequest {
  url: URL;
  /** The setting that configured it, named in errors (never its value). */
  setting: string;
  headers?: Record<string, string>;
  /** JSON text. */
  body: string;
}

/**
 * POST one alert request once. Resolves on a 2xx; throws `AlertDeliveryError`
 * otherwise, permanent for a 4xx other than 408 and 429 (a removed webhook, a
 * wrong routing key).
 */
export async function sendAlertRequest(request: AlertRequest, timeoutMs: number): Promise<void> {
  const { url, setting } = request;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': ALERT_USER_AGENT, ...request.headers },
      body: request.body,
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const detail = (cause?.code ?? cause?.message ?? (error as Error).message).replace(/\w+:\/\/\S+/g, '<url>'); // never echo the URL
    const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : `could not connect (${detail})`;
    throw new AlertDeliveryError(`${setting}: ${reason}`, false);
  }
  await response.body?.cancel().catch(() => undefined);
  if (response.ok) return;
  const permanent = response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429;
  throw new AlertDeliveryError(
    `${setting} answered ${response.status}${permanent ? ': check the setting (Slack answers 404 or 410 for a removed webhook, PagerDuty 400 for a wrong routing key)' : ''}`,
    permanent,
  );
}
