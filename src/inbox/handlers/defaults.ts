import { authHandlers } from './auth.js';
import { createDatabaseHandlers, databaseTableHandlers } from './database.js';
import { paymentsHandlers } from './payments.js';
import { HandlerRegistry } from './registry.js';

/** The shipped handlers of all three sources; the worker uses this unless a test injects its own. */
export function createDefaultHandlers(): HandlerRegistry {
  return new HandlerRegistry()
    .onTable('auth', authHandlers)
    .onTable('payments', paymentsHandlers)
    .onTable('database', createDatabaseHandlers(databaseTableHandlers));
}
