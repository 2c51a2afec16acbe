import type { StripeApi } from '../../payments-api/stripe-client.js';
import { authHandlers } from './auth.js';
import { createDatabaseHandlers, databaseTableHandlers } from './database.js';
import { createPaymentsHandlers } from './payments.js';
import { HandlerRegistry } from './registry.js';

/** What the shipped handlers may call out to; each part optional. */
export interface HandlerServices {
  /** Set with STRIPE_SECRET_KEY: payments handlers store the API's current objects. */
  stripe?: StripeApi;
}

/** The shipped handlers of all three sources; the worker uses this unless a test injects its own. */
export function createDefaultHandlers(services: HandlerServices = {}): HandlerRegistry {
  return new HandlerRegistry()
    .onTable('auth', authHandlers)
    .onTable('payments', createPaymentsHandlers(services.stripe))
    .onTable('database', createDatabaseHandlers(databaseTableHandlers));
}
