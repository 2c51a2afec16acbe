import type { ProviderDefinition } from '../provider.js';
import { clerkProvider } from './clerk.js';
import { supabaseDatabaseProvider } from './supabase-database.js';
import { githubProvider } from './github.js';
import { lemonSqueezyProvider } from './lemonsqueezy.js';
import { paddleProvider } from './paddle.js';
import { stripeProvider } from './stripe.js';
import { polarProvider } from './polar.js';
import { resendProvider } from './resend.js';
import { shopifyProvider } from './shopify.js';
import { supabaseAuthProvider } from './supabase-auth.js';
import { twilioProvider } from './twilio.js';
import { workosProvider } from './workos.js';

/**
 * The one list of senders hookrun ships: adding one is its file and a line
 * here. Routes, their order in docs and listings, which routes offer a
 * choice (`<ROUTE>_PROVIDER`, the first listed is the default), the secret
 * env names config reads, the receivers, `send`, `check` and the OpenAPI
 * document all come from it. The files here import no config (config reads it).
 */
export const PROVIDERS = [
  stripeProvider,
  paddleProvider,
  lemonSqueezyProvider,
  polarProvider,
  clerkProvider,
  workosProvider,
  supabaseAuthProvider,
  supabaseDatabaseProvider,
  githubProvider,
  shopifyProvider,
  resendProvider,
  twilioProvider,
] as const;

type Shipped = (typeof PROVIDERS)[number];

/** Event sources hookrun receives (`/webhooks/<source>`, the `source` column of `webhook_events`). */
export type Source = Shipped['route'];

/** The providers that may serve a route, by name. */
export type ProviderName<R extends Source> = Extract<Shipped, { route: R }>['name'];

type UnionToIntersection<U> = (U extends unknown ? (k: U) => void : never) extends (k: infer I) => void ? I : never;
type IsUnion<T> = [T] extends [UnionToIntersection<T>] ? false : true;

/** Routes more than one shipped provider serves: `<ROUTE>_PROVIDER` picks one of them. */
export type ChoosableSource = { [R in Source]: IsUnion<ProviderName<R>> extends true ? R : never }[Source];

/** Which provider serves each route that offers a choice (`PAYMENTS_PROVIDER`, `AUTH_PROVIDER`). */
export type ProviderChoice = { [R in ChoosableSource]: ProviderName<R> };

/** Every route, in the order of the list. */
export const SOURCES: readonly Source[] = [...new Set(PROVIDERS.map((p) => p.route))];

/** Each route's providers by name, the default (first listed) first. */
export const PROVIDERS_BY_ROUTE = Object.fromEntries(
  SOURCES.map((route) => [route, Object.fromEntries(PROVIDERS.filter((p) => p.route === route).map((p) => [p.name, p]))]),
) as { [R in Source]: Record<ProviderName<R>, ProviderDefinition> };

/** Routes that offer a choice of provider, in list order. */
export const CHOOSABLE_SOURCES = SOURCES.filter((route) => Object.keys(PROVIDERS_BY_ROUTE[route]).length > 1) as ChoosableSource[];

/** Whether several providers serve the route, so `<ROUTE>_PROVIDER` picks one. */
export function isChoosable(source: Source): source is ChoosableSource {
  return (CHOOSABLE_SOURCES as readonly Source[]).includes(source);
}

/** Who may serve `/webhooks/payments` (`PAYMENTS_PROVIDER`). */
export const PAYMENTS_PROVIDERS = PROVIDERS_BY_ROUTE.payments;

/** Who may serve `/webhooks/auth` (`AUTH_PROVIDER`). */
export const AUTH_PROVIDERS = PROVIDERS_BY_ROUTE.auth;

/** A route's provider when nothing picks another: the first listed. */
export function defaultProvider(source: Source): ProviderDefinition {
  return Object.values<ProviderDefinition>(PROVIDERS_BY_ROUTE[source])[0]!;
}

/** The env var that picks a choosable route's provider (`PAYMENTS_PROVIDER`). */
export function choiceEnvName(source: ChoosableSource): string {
  return `${source.toUpperCase()}_PROVIDER`;
}

/** The route's own secret name, read before its chosen provider's names on a choosable route (`PAYMENTS_WEBHOOK_SECRET`). */
export function routeSecretEnvName(source: ChoosableSource): string {
  return `${source.toUpperCase()}_WEBHOOK_SECRET`;
}

/** The sender configured for a route: the choice for a choosable route, its only provider otherwise. */
export function providerFor(config: { providers: Partial<ProviderChoice> }, source: Source): ProviderDefinition {
  const chosen = (config.providers as Partial<Record<Source, string>>)[source];
  return (chosen && (PROVIDERS_BY_ROUTE[source] as Record<string, ProviderDefinition>)[chosen]) || defaultProvider(source);
}
