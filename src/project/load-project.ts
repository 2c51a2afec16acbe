import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseEventName, type ReceivingSetup } from '../api/event-names.js';
import type { Config } from '../config/config.js';
import { ConfigError } from '../errors.js';
import { BUILT_IN_HANDLER_NAMES, createDefaultHandlers } from '../inbox/handlers/defaults.js';
import type { HandlerRegistry } from '../deliveries/registry.js';
import { displayPath } from '../module-files.js';
import type { StripeApi } from '../payments-api/stripe-client.js';
import { isChoosable, providerFor } from '../webhooks/providers/index.js';
import { loadProjectHandlers, registerProjectHandlers, type ProjectHandler } from './handlers.js';

/** The project's handlers folder as a URL (a trailing slash, so files resolve inside it). */
export const handlersDir = (projectDir: string) => pathToFileURL(join(projectDir, 'handlers') + '/');

/** What the `on` lists of a project may name: each route's configured provider, and platform.json's own senders. */
export function receivingSetup(config: Pick<Config, 'providers' | 'customWebhooks'>): ReceivingSetup {
  return {
    providerOf: (route) => (isChoosable(route as never) ? providerFor(config, route as never).name : undefined),
    customRoutes: config.customWebhooks.map((w) => w.route),
  };
}

/**
 * Whether the folder is meant to be a hookrun project (HOOKRUN_PROJECT names
 * it, or its package.json depends on hookrun): then a project without
 * `jobs/` or `handlers/` is a mistake worth stopping for.
 */
function isDeclaredProject(projectDir: string, env: Readonly<Record<string, string | undefined>>): boolean {
  if (env.HOOKRUN_PROJECT) return true;
  try {
    const pkg = JSON.parse(readFileSync(join(projectDir, 'package.json'), 'utf8')) as { name?: string; dependencies?: object; devDependencies?: object };
    return pkg.name !== 'hookrun' && ('hookrun' in (pkg.dependencies ?? {}) || 'hookrun' in (pkg.devDependencies ?? {}));
  } catch {
    return false;
  }
}

/**
 * The handlers a running hookrun uses: the shipped ones (on unless
 * platform.json switches them off) and the project's `handlers/` files;
 * the payments mirror and the project's `ctx.stripe` (thin events) ask
 * `services.stripe` (the service's one client) when given.
 */
export async function loadHandlers(
  config: Config,
  services: { stripe?: StripeApi } = {},
  env: Readonly<Record<string, string | undefined>> = config.environment,
): Promise<{ registry: HandlerRegistry; project: ProjectHandler[] }> {
  const registry = createDefaultHandlers({ stripe: services.stripe, providers: config.providers, enabled: config.builtInHandlers });
  const setup = receivingSetup(config);
  const project = await loadProjectHandlers(handlersDir(config.projectDir), setup, env, BUILT_IN_HANDLER_NAMES);
  if (project === undefined && !existsSync(join(config.projectDir, 'jobs')) && isDeclaredProject(config.projectDir, env)) {
    throw new ConfigError(
      `${displayPath(config.projectDir) || '.'}: no jobs/ or handlers/ folder. Add handlers/<name>.ts (export default defineHandler(…)) or jobs/<name>.ts, or run \`npx hookrun init\` to make a project.`,
    );
  }
  registerProjectHandlers(registry, project ?? [], { stripe: services.stripe, resolveEventName: (name) => parseEventName(name, setup) });
  return { registry, project: project ?? [] };
}
