import { SOURCES, type ProviderChoice, type Source } from '../../config.js';
import type { StripeApi } from '../../payments-api/stripe-client.js';
import { providerFor, type ProviderName } from '../../webhooks/providers/index.js';
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
  /** Which provider's events arrive on each route that offers a choice (default Stripe and Clerk). */
  providers?: Partial<ProviderChoice>;
}

/**
 * The mirrors each shipped provider feeds, by route and provider name. A
 * provider with no entry (Polar, Supabase Auth, GitHub, Shopify, Resend,
 * Twilio, a new one) has its events stored and `ignored` until you add handlers.
 */
const PROVIDER_HANDLERS: { [R in Source]?: Partial<Record<ProviderName<R>, (services: HandlerServices) => HandlerTable>> } = {
  payments: { stripe: (services) => createPaymentsHandlers(services.stripe), paddle: () => paddleHandlers, lemonsqueezy: () => lemonSqueezyHandlers },
  auth: { clerk: () => authHandlers, workos: () => workosHandlers },
  database: { supabase: () => createDatabaseHandlers(databaseTableHandlers) },
};

/** The shipped handlers of each route's configured provider; the worker uses this unless a test injects its own. */
export function createDefaultHandlers(services: HandlerServices = {}): HandlerRegistry {
  const registry = new HandlerRegistry();
  for (const source of SOURCES) {
    const { name } = providerFor({ providers: services.providers ?? {} }, source);
    const build = (PROVIDER_HANDLERS[source] as Partial<Record<string, (services: HandlerServices) => HandlerTable>> | undefined)?.[name];
    if (build) registry.onTable(source, build(services));
  }
  return registry;
}
