import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

/** The part of stripe-node's webhook module the verifier calls (`Stripe.webhooks.signature.verifyHeader`). */
interface StripeSignature {
  verifyHeader(payload: Buffer, header: string, secret: string, tolerance: number, cryptoProvider: undefined, receivedAt: number): void;
}

/** What hookrun uses of stripe-node's webhooks: verify, sign test deliveries (`hookrun send`), and the API version samples carry. */
export interface StripeWebhooks {
  signature: StripeSignature;
  generateTestHeaderString(options: { payload: string; secret: string; timestamp: number }): string;
  apiVersion: string;
}

/**
 * stripe-node's own webhook module, built the way its Node entry builds
 * `Stripe.webhooks` (`createWebhooks(new NodePlatformFunctions())`), without
 * loading the whole API client: `import 'stripe'` evaluates ~400 resource
 * modules and cost ~300-450 ms of every start-up (docs/performance.md). The package
 * exports only its root, so the two modules are loaded by path from the
 * installed (pinned) package; if that layout ever changes, the full package
 * is loaded instead. Either way stripe-node does the verification.
 */
async function loadStripeWebhooks(): Promise<{ webhooks: StripeWebhooks; path: 'fast' | 'package' }> {
  try {
    const entry = pathToFileURL(createRequire(import.meta.url).resolve('stripe'));
    const [webhooksModule, platform, version] = await Promise.all([
      import(new URL('../esm/Webhooks.js', entry).href),
      import(new URL('../esm/platform/NodePlatformFunctions.js', entry).href),
      import(new URL('../esm/apiVersion.js', entry).href),
    ]);
    const webhooks = webhooksModule.createWebhooks(new platform.NodePlatformFunctions());
    if (webhooks?.signature && typeof version.ApiVersion === 'string') {
      return {
        webhooks: { signature: webhooks.signature, generateTestHeaderString: (o) => webhooks.generateTestHeaderString(o), apiVersion: version.ApiVersion },
        path: 'fast',
      };
    }
  } catch {
    // fall through to the package root
  }
  const { default: Stripe } = await import('stripe');
  const webhooks = Stripe.webhooks as unknown as { signature: StripeSignature; generateTestHeaderString: StripeWebhooks['generateTestHeaderString'] };
  return {
    webhooks: { signature: webhooks.signature, generateTestHeaderString: (o) => webhooks.generateTestHeaderString(o), apiVersion: Stripe.API_VERSION },
    path: 'package',
  };
}

const loaded = await loadStripeWebhooks();

/** stripe-node's webhook functions, loaded once (see above). */
export const stripeWebhooks: StripeWebhooks = loaded.webhooks;

/**
 * Which way stripe-node's verifier was loaded: `fast` (its webhook module by
 * path) or `package` (the whole client, ~300-450 ms slower to start). A test
 * fails on `package`, so an upgrade that moves stripe's files is noticed.
 */
export const STRIPE_VERIFIER_LOAD_PATH = loaded.path;
