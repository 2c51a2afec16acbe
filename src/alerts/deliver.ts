import { hostname } from 'node:os';

/** The user agent of every alert, so the receiving end can tell hookrun's messages apart. */
export const ALERT_USER_AGENT = 'hookrun-alerts/1';

/** An alert the receiving URL did not take; the message never contains the URL (it is a credential). */
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

/**
 * POST `{"text": …}` once, as Slack's incoming webhooks (and Discord's
 * `/slack` endpoint, Mattermost, Google Chat's compatible URLs) take it.
 * Resolves on a 2xx; throws `AlertDeliveryError` otherwise.
 */
export async function postAlert(url: URL, text: string, timeoutMs: number): Promise<void> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': ALERT_USER_AGENT },
      body: JSON.stringify({ text }),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const detail = (cause?.code ?? cause?.message ?? (error as Error).message).replace(/\w+:\/\/\S+/g, '<url>'); // never echo the URL
    const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : `could not connect (${detail})`;
    throw new AlertDeliveryError(`ALERT_WEBHOOK_URL: ${reason}`, false);
  }
  await response.body?.cancel().catch(() => undefined);
  if (response.ok) return;
  const permanent = response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429;
  throw new AlertDeliveryError(
    `ALERT_WEBHOOK_URL answered ${response.status}${permanent ? ': check the URL (Slack answers 404 or 410 for a removed webhook)' : ''}`,
    permanent,
  );
}
