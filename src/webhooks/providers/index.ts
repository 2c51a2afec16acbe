import type { AuthProviderName, Config, PaymentsProviderName, Source } from '../../config.js';
import type { ProviderDefinition } from '../provider.js';
import { clerkProvider } from './auth.js';
import { supabaseDatabaseProvider } from './database.js';
import { githubProvider } from './github.js';
import { lemonSqueezyProvider } from './lemonsqueezy.js';
import { paddleProvider } from './paddle.js';
import { stripeProvider } from './payments.js';
import { polarProvider } from './polar.js';
import { resendProvider } from './resend.js';
import { shopifyProvider } from './shopify.js';
import { supabaseAuthProvider } from './supabase-auth.js';
import { twilioProvider } from './twilio.js';
import { workosProvider } from './workos.js';

/** Who may serve `/webhooks/payments` (`PAYMENTS_PROVIDER`). */
export const PAYMENTS_PROVIDERS: Record<PaymentsProviderName, ProviderDefinition> = {
  stripe: stripeProvider,
  paddle: paddleProvider,
  lemonsqueezy: lemonSqueezyProvider,
  polar: polarProvider,
};

/** Who may serve `/webhooks/auth` (`AUTH_PROVIDER`). */
export const AUTH_PROVIDERS: Record<AuthProviderName, ProviderDefinition> = {
  clerk: clerkProvider,
  workos: workosProvider,
  supabase: supabaseAuthProvider,
};

/**
 * The one list of senders, each route with its default provider: receivers,
 * `hookrun send`, `check`, the OpenAPI document and the early refusal all
 * loop over it. Typed by route (config.ts `RECEIVER_SECRETS`) and by the
 * provider names, so a half-defined sender does not compile.
 */
export const PROVIDERS: Record<Source, ProviderDefinition> = {
  payments: PAYMENTS_PROVIDERS.stripe,
  auth: AUTH_PROVIDERS.clerk,
  database: supabaseDatabaseProvider,
  github: githubProvider,
  shopify: shopifyProvider,
  resend: resendProvider,
  twilio: twilioProvider,
};

/** The sender configured for a route: `PAYMENTS_PROVIDER` / `AUTH_PROVIDER` pick for the two provider routes. */
export function providerFor(config: Pick<Config, 'providers'>, source: Source): ProviderDefinition {
  if (source === 'payments') return PAYMENTS_PROVIDERS[config.providers.payments];
  if (source === 'auth') return AUTH_PROVIDERS[config.providers.auth];
  return PROVIDERS[source];
}
