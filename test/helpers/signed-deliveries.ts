import { Agent, request } from 'node:http';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import type { Source } from '../../src/webhooks/providers/index.js';
import { SECRETS } from './config.js';
import { recordResponse } from './secret-scan.js';

/** One webhook as a provider would send it; signed at send time, so a retry carries a fresh timestamp like the real sender's. */
export interface Delivery {
  source: Source;
  /** The idempotency key hookrun stores (Stripe event id, svix-id, webhook-id). */
  key: string;
  body: string;
  sign(nowMs: number): Record<string, string>;
}

/** Stripe signs with its own helper (tests prove compatibility with the real sender). */
export function stripeDelivery(event: { id: string } & Record<string, unknown>, secret: string = SECRETS.payments): Delivery {
  const body = JSON.stringify(event);
  return {
    source: 'payments',
    key: event.id,
    body,
    sign: (nowMs) => ({
      'content-type': 'application/json; charset=utf-8',
      'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: Math.floor(nowMs / 1000) }),
    }),
  };
}

/** Svix/Clerk signing through the standardwebhooks package; `prefix` picks `svix-*` or `webhook-*`. */
export function svixDelivery(source: Source, id: string, payload: Record<string, unknown>, secret: string, prefix: 'svix' | 'webhook' = 'svix'): Delivery {
  const body = JSON.stringify(payload);
  const signer = new Webhook(secret);
  return {
    source,
    key: id,
    body,
    sign: (nowMs) => {
      const at = new Date(Math.floor(nowMs / 1000) * 1000);
      return {
        'content-type': 'application/json',
        [`${prefix}-id`]: id,
        [`${prefix}-timestamp`]: String(Math.floor(nowMs / 1000)),
        [`${prefix}-signature`]: signer.sign(id, at, body),
      };
    },
  };
}

/** A Stripe `checkout.session.completed` that mirrors customer `cus_<tag>` linked to user `user_<tag>`. */
export function checkoutCompleted(tag: string, createdSeconds: number = Math.floor(Date.now() / 1000)): Delivery {
  return stripeDelivery({
    id: `evt_${tag}`,
    object: 'event',
    api_version: '2024-06-20',
    created: createdSeconds,
    livemode: false,
    type: 'checkout.session.completed',
    data: {
      object: {
        id: `cs_test_${tag}`,
        object: 'checkout.session',
        mode: 'subscription',
        status: 'complete',
        payment_status: 'paid',
        customer: `cus_${tag}`,
        client_reference_id: `user_${tag}`,
        customer_details: { email: `${tag}@example.com`, name: `Customer ${tag}` },
        subscription: `sub_${tag}`,
        created: createdSeconds,
      },
    },
  });
}

/** A Clerk `user.created` (Svix-signed) that mirrors user `user_<tag>`. */
export function clerkUserCreated(tag: string, atMs: number = Date.now()): Delivery {
  const emailId = `idn_${tag}`;
  return svixDelivery(
    'auth',
    `msg_${tag}`,
    {
      object: 'event',
      type: 'user.created',
      timestamp: atMs,
      instance_id: 'ins_reliability',
      data: {
        id: `user_${tag}`,
        object: 'user',
        first_name: 'Test',
        last_name: tag,
        primary_email_address_id: emailId,
        email_addresses: [{ id: emailId, object: 'email_address', email_address: `${tag}@example.com`, verification: { status: 'verified' } }],
        created_at: atMs,
        updated_at: atMs,
      },
    },
    SECRETS.auth,
  );
}

/** A Supabase Database Webhook INSERT, authenticated by the bearer secret (key = SHA-256 of the body). */
export function supabaseInsert(tag: string): Delivery {
  const body = JSON.stringify({ type: 'INSERT', table: 'profiles', schema: 'public', record: { id: tag, name: `Profile ${tag}` }, old_record: null });
  return {
    source: 'database',
    key: '',
    body,
    sign: () => ({ 'content-type': 'application/json', authorization: `Bearer ${SECRETS.database}` }),
  };
}

/** The outcome of one POST: a status, or the transport error (connection refused/reset, timeout). */
export type SendResult = { status: number; body: string; ms: number } | { error: string; ms: number };

/** POST a delivery with node:http (keep-alive agent), bounded by `timeoutMs`; records the response for the secret scan. */
export function sendDelivery(baseUrl: string, delivery: Delivery, options: { agent?: Agent; timeoutMs?: number; nowMs?: number } = {}): Promise<SendResult> {
  const started = Date.now();
  const headers = delivery.sign(options.nowMs ?? Date.now());
  return new Promise((resolve) => {
    const req = request(
      `${baseUrl}/webhooks/${delivery.source}`,
      {
        method: 'POST',
        agent: options.agent,
        headers: { ...headers, 'content-length': Buffer.byteLength(delivery.body) },
        timeout: options.timeoutMs ?? 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          recordResponse(`POST /webhooks/${delivery.source}`, res.statusCode ?? 0, res.headers, body);
          resolve({ status: res.statusCode ?? 0, body, ms: Date.now() - started });
        });
        res.on('error', (error) => resolve({ error: error.message, ms: Date.now() - started }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', (error) => resolve({ error: (error as NodeJS.ErrnoException).code ?? error.message, ms: Date.now() - started }));
    req.end(delivery.body);
  });
}

/** True for a 2xx answer: the provider considers the event delivered and never sends it again. */
export function acknowledged(result: SendResult): boolean {
  return 'status' in result && result.status >= 200 && result.status < 300;
}

/**
 * Send `deliveries` with `concurrency` workers; `onResult` sees each outcome
 * (e.g. to kill the server mid-stream). Returns the outcomes in input order.
 */
export async function sendAll(
  baseUrl: string,
  deliveries: Delivery[],
  options: {
    concurrency: number;
    timeoutMs?: number;
    onResult?: (index: number, result: SendResult) => void;
    /** Stop taking new deliveries once this returns true (the rest are `{ error: 'not sent' }`), like a provider that backs off. */
    until?: () => boolean;
  },
): Promise<SendResult[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const results: SendResult[] = Array.from({ length: deliveries.length }, () => ({ error: 'not sent', ms: 0 }));
  let next = 0;
  const workers = Array.from({ length: options.concurrency }, async () => {
    while (next < deliveries.length && !options.until?.()) {
      const index = next++;
      results[index] = await sendDelivery(baseUrl, deliveries[index]!, { agent, timeoutMs: options.timeoutMs });
      options.onResult?.(index, results[index]!);
    }
  });
  await Promise.all(workers);
  agent.destroy();
  return results;
}
