import { type ProviderChoice, providerFor, type ProviderName, type Source, SOURCES } from '../../webhooks/providers/index.js';
import { ConfigError } from '../../errors.js';
import type { StripeApi } from '../../payments-api/stripe-client.js';
import { clerkMirrorHandlers } from './clerk-mirror.js';
import { createDatabaseChangesHandlers, databaseTableHandlers } from './database-changes.js';
import { lemonSqueezyMirrorHandlers } from './lemonsqueezy-mirror.js';
import { paddleMirrorHandlers } from './paddle-mirror.js';
import { createStripeMirrorHandlers } from './stripe-mirror.js';
import { HandlerRegistry, type HandlerTable } from '../../deliveries/registry.js';
import { workosMirrorHandlers } from './workos-mirror.js';

/** What the shipped handlers may call out to; each part optional. */
export interface HandlerServices {
  /** Set with STRIPE_SECRET_KEY: payments handlers store the API's current objects. */
  stripe?: StripeApi;
  /** Which provider's events arrive on each route that offers a choice (default Stripe and Clerk). */
  providers?: Partial<ProviderChoice>;
  /** Shipped handlers turned on or off by name (platform.json `builtInHandlers`); absent: on. */
  enabled?: Record<string, boolean>;
}

/** The name a shipped handler table runs under: `<provider>-mirror`, or `database-changes`. */
export function builtInHandlerName(source: Source, provider: string): string {
  return source === 'database' ? 'database-changes' : `${provider}-mirror`;
}

/**
 * The mirrors each shipped provider feeds, by route and provider name. A
 * provider with no entry (Polar, Supabase Auth, GitHub, Shopify, Resend,
 * Twilio, a new one) has its events stored and `ignored` until you add handlers.
 */
const PROVIDER_HANDLERS: { [R in Source]?: Partial<Record<ProviderName<R>, (services: HandlerServices) => HandlerTable>> } = {
  payments: {
    stripe: (services) => createStripeMirrorHandlers(services.stripe),
    paddle: () => paddleMirrorHandlers,
    lemonsqueezy: () => lemonSqueezyMirrorHandlers,
  },
  auth: { clerk: () => clerkMirrorHandlers, workos: () => workosMirrorHandlers },
  database: { supabase: () => createDatabaseChangesHandlers(databaseTableHandlers) },
};

/** Every shipped handler's name (a project's handler may not take one). */
export const BUILT_IN_HANDLER_NAMES: readonly string[] = Object.entries(PROVIDER_HANDLERS).flatMap(([source, byName]) =>
  Object.keys(byName ?? {}).map((provider) => builtInHandlerName(source as Source, provider)),
);

/**
 * The shipped handlers of each route's configured provider, each under its
 * name, less those switched off; the worker uses this unless a test injects
 * its own. A switch naming no shipped handler is a ConfigError.
 */
export function createDefaultHandlers(services: HandlerServices = {}): HandlerRegistry {
  const enabled = services.enabled ?? {};
  const unknown = Object.keys(enabled).filter((name) => !BUILT_IN_HANDLER_NAMES.includes(name));
  if (unknown.length > 0)
    throw new ConfigError(
      `platform.json builtInHandlers: no shipped handler ${unknown.map((n) => `"${n}"`).join(', ')}; the shipped ones are ${BUILT_IN_HANDLER_NAMES.join(', ')}.`,
    );
  const registry = new HandlerRegistry();
  for (const source of SOURCES) {
    const { name } = providerFor({ providers: services.providers ?? {} }, source);
    const build = (PROVIDER_HANDLERS[source] as Partial<Record<string, (services: HandlerServices) => HandlerTable>> | undefined)?.[name];
    const handlerName = builtInHandlerName(source, name);
    if (build && enabled[handlerName] !== false) registry.onTable(source, build(services), { name: handlerName });
  }
  return registry;
}
