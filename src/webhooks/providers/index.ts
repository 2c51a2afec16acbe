import type { Source } from '../../config.js';
import type { ProviderDefinition } from '../provider.js';
import { clerkProvider } from './auth.js';
import { supabaseDatabaseProvider } from './database.js';
import { githubProvider } from './github.js';
import { stripeProvider } from './payments.js';
import { resendProvider } from './resend.js';
import { shopifyProvider } from './shopify.js';
import { twilioProvider } from './twilio.js';

/**
 * The one list of senders: receivers, `hookrun send`, `check`, the OpenAPI
 * document and the early refusal all loop over it. Typed by route (config.ts
 * `SECRET_ENV_NAMES`), so a route without a definition does not compile.
 */
export const PROVIDERS: Record<Source, ProviderDefinition> = {
  payments: stripeProvider,
  auth: clerkProvider,
  database: supabaseDatabaseProvider,
  github: githubProvider,
  shopify: shopifyProvider,
  resend: resendProvider,
  twilio: twilioProvider,
};
