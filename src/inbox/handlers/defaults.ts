import type { ProviderChoice } from '../../config.js';
import type { StripeApi } from '../../payments-api/stripe-client.js';
import { authHandlers } from './auth.js';
import { createDatabaseHandlers, databaseTableHandlers } from './database.js';
import { lemonSqueezyHandlers, paddleHandlers } from './paddle-lemonsqueezy.js';
import { createPaymentsHandlers } from './payments.js';
import { HandlerRegistry, type HandlerTable } from './registry.js';
import { workosHandlers } from './workos.js';

/** What the shipped handlers may call out to; each part optional. */
export interface HandlerServices {
  /** Set with STRIPE_SECRET_KEY: payments handlers store the API's current objects. */
  stripe?: StripeApi;
  /** Which provider's events arrive on /webhooks/payments and /webhooks/auth (default Stripe and Clerk). */
  providers?: ProviderChoice;
}

/** The mirrors each provider feeds; Polar and Supabase Auth events are stored and ignored until you add handlers. */
function paymentsTable(services: HandlerServices): HandlerTable {
  const provider = services.providers?.payments ?? 'stripe';
  if (provider === 'stripe') return createPaymentsHandlers(services.stripe);
  return { paddle: paddleHandlers, lemonsqueezy: lemonSqueezyHandlers, polar: {} }[provider];
}

function authTable(services: HandlerServices): HandlerTable {
  return { clerk: authHandlers, workos: workosHandlers, supabase: {} }[services.providers?.auth ?? 'clerk'];
}

/** The shipped handlers of the seed's three routes; the worker uses this unless a test injects its own. */
export function createDefaultHandlers(services: HandlerServices = {}): HandlerRegistry {
  return new HandlerRegistry()
    .onTable('auth', authTable(services))
    .onTable('payments', paymentsTable(services))
    .onTable('database', createDatabaseHandlers(databaseTableHandlers));
}
