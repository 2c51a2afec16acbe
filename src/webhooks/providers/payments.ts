import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { AppError } from '../../errors.js';
import { parseJsonObject, requireString, type Verifier } from '../delivery.js';

/** The part of stripe-node's webhook module the verifier calls (`Stripe.webhooks.signature.verifyHeader`). */
interface StripeSignature {
  verifyHeader(payload: Buffer, header: string, secret: string, tolerance: number, cryptoProvider: undefined, receivedAt: number): void;
}

/**
 * stripe-node's own webhook module, built the way its Node entry builds
 * `Stripe.webhooks` (`createWebhooks(new NodePlatformFunctions())`), without
 * loading the whole API client: `import 'stripe'` evaluates ~400 resource
 * modules and cost ~300-450 ms of every start-up (BENCHMARKS.md). The package
 * exports only its root, so the two modules are loaded by path from the
 * installed (pinned) package; if that layout ever changes, the full package
 * is loaded instead. Either way stripe-node does the verification.
 */
async function loadStripeSignature(): Promise<{ signature: StripeSignature; path: 'fast' | 'package' }> {
  try {
    const entry = pathToFileURL(createRequire(import.meta.url).resolve('stripe'));
    const [webhooks, platform] = await Promise.all([
      import(new URL('../esm/Webhooks.js', entry).href),
      import(new URL('../esm/platform/NodePlatformFunctions.js', entry).href),
    ]);
    const signature = webhooks.createWebhooks(new platform.NodePlatformFunctions()).signature as StripeSignature | null;
    if (signature) return { signature, path: 'fast' };
  } catch {
    // fall through to the package root
  }
  const { default: Stripe } = await import('stripe');
  return { signature: Stripe.webhooks.signature as StripeSignature, path: 'package' };
}

const loaded = await loadStripeSignature();
const stripeSignature = loaded.signature;

/**
 * Which way stripe-node's verifier was loaded: `fast` (its webhook module by
 * path) or `package` (the whole client, ~300-450 ms slower to start). A test
 * fails on `package`, so an upgrade that moves stripe's files is noticed.
 */
export const STRIPE_VERIFIER_LOAD_PATH = loaded.path;

const STALE_MESSAGE = 'Timestamp outside the tolerance zone';

/**
 * The timestamp stripe-node verifies against, read exactly as its
 * `parseHeader` does: the LAST `t=` element wins, the name must be `t` to the
 * letter, the value goes through parseInt. Reading it any other way (say, the
 * first `t`) would check the future side of the tolerance against a
 * timestamp the signature does not cover.
 */
export function headerTimestamp(header: string): number | undefined {
  let timestamp: number | undefined;
  for (const item of header.split(',')) {
    const [name, value] = item.split('=');
    if (name === 't') timestamp = Number.parseInt(value ?? '', 10);
  }
  return timestamp !== undefined && Number.isFinite(timestamp) ? timestamp : undefined;
}

/**
 * Stripe's scheme (`Stripe-Signature: t=…,v1=…`, HMAC-SHA256 of `t.rawBody`),
 * checked by stripe-node itself against each secret of a rotation list. Any
 * `v1` may match; `v0` is ignored. stripe-node checks only the past side of
 * the tolerance, so the future side is checked here.
 * https://docs.stripe.com/webhooks#verify-manually
 */
export function createPaymentsVerifier(secrets: string[]): Verifier {
  return ({ body, headers, nowMs, toleranceSeconds }) => {
    const header = headers.get('stripe-signature');
    if (!header) {
      throw new AppError('missing_signature', 'Missing Stripe-Signature header: send the request exactly as Stripe signs it.');
    }
    const timestamp = headerTimestamp(header);
    if (timestamp === undefined || !/(^|,)\s*v1=/.test(header)) {
      throw new AppError('invalid_signature', 'Stripe-Signature must look like "t=<unix seconds>,v1=<hex signature>".');
    }
    let stale = false;
    let matched = false;
    for (const secret of secrets) {
      try {
        stripeSignature.verifyHeader(Buffer.from(body.buffer, body.byteOffset, body.byteLength), header, secret, toleranceSeconds, undefined, nowMs);
        matched = true;
        break;
      } catch (error) {
        if ((error as Error).message?.startsWith(STALE_MESSAGE)) stale = true;
      }
    }
    if (stale && !matched) {
      throw new AppError('timestamp_out_of_tolerance', `Stripe-Signature timestamp is more than ${toleranceSeconds} s old; check the clock, or resend the event from the Stripe dashboard.`);
    }
    if (!matched) {
      throw new AppError('invalid_signature', 'No Stripe-Signature v1 signature matches the configured secret. Check PAYMENTS_WEBHOOK_SECRET and that the body is forwarded unchanged.');
    }
    if (timestamp - Math.floor(nowMs / 1000) > toleranceSeconds) {
      throw new AppError('timestamp_out_of_tolerance', `Stripe-Signature timestamp is more than ${toleranceSeconds} s in the future; check the sender's clock.`);
    }
    const { text, value } = parseJsonObject(body);
    return { key: requireString(value, 'id', 'A Stripe event'), type: requireString(value, 'type', 'A Stripe event'), payloadJson: text };
  };
}
