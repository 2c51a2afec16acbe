import { isHandlerDefinition, type BatchHandlerContext, type HandlerContext, type HandlerDefinition, type StoredEvent } from '../api/define-handler.js';
import type { ClaimedEvent } from '../deliveries/claimed.js';
import { parseEventName, type EventSelector, type ReceivingSetup } from '../api/event-names.js';
import { ConfigError, messageOf } from '../errors.js';
import type { EventHandler, HandlerRegistry } from '../deliveries/registry.js';
import { stripeThinFetchers } from '../inbox/handlers/stripe-thin-events.js';
import type { StripeApi } from '../payments-api/stripe-client.js';
import { readNamedSettings } from '../config/named-settings.js';
import { displayPath, importDefault, listModuleFiles, PROJECT_EXTENSIONS } from '../module-files.js';
import { parseFlowOptions, type FlowPlan } from '../flow/options.js';
import { durableSteps } from './handler-steps.js';

/** A handler name is its file name: lowercase letters, digits and dashes. */
export const HANDLER_NAME = /^[a-z0-9][a-z0-9-]*$/;

/** One handler file of a project, checked: what it takes, and the settings it asked for. */
export interface ProjectHandler {
  name: string;
  file: string;
  /** Whatever its `on` (isHandlerDefinition): the engine passes payloads it has not typed. */
  definition: HandlerDefinition<never, string>;
  selectors: EventSelector[];
  env: Readonly<Record<string, string>>;
  /** Its flow options, checked; undefined when it sets none (it runs inline in the inbox's batch). */
  flow?: FlowPlan;
}

/**
 * Load `handlers/` of a project: each file default-exports `defineHandler(…)`
 * and its name is its identity. Every problem stops start-up naming the file
 * and the fix: not a handler, a bad name, two files with one name, an
 * unknown provider or type, a setting not set, a name the shipped handlers use.
 * Undefined when the project has no `handlers/` folder.
 */
export async function loadProjectHandlers(
  dir: URL,
  setup: ReceivingSetup,
  env: Readonly<Record<string, string | undefined>>,
  reserved: readonly string[] = [],
): Promise<ProjectHandler[] | undefined> {
  const files = listModuleFiles(dir, PROJECT_EXTENSIONS);
  if (files === undefined) return undefined;
  const handlers: ProjectHandler[] = [];
  for (const { url, name, file } of files) {
    const where = displayPath(url);
    if (!HANDLER_NAME.test(name))
      throw new ConfigError(`${where}: a handler's file name is its name; rename it to lowercase letters, digits and dashes (e.g. send-welcome-email.ts).`);
    const twin = handlers.find((h) => h.name === name);
    if (twin) throw new ConfigError(`${where}: a second file for handler "${name}" (${twin.file}); keep one.`);
    if (reserved.includes(name)) throw new ConfigError(`${where}: "${name}" is the name of a shipped handler; rename the file.`);
    let exported: unknown;
    try {
      exported = await importDefault(url);
    } catch (error) {
      throw new ConfigError(`${where}: cannot be loaded (${messageOf(error)}).`);
    }
    if (!isHandlerDefinition(exported)) {
      throw new ConfigError(
        `${where}: must \`export default defineHandler({ on: ['<provider>:<type>'], run(event, ctx) { … } })\` (import { defineHandler } from 'hookrun').`,
      );
    }
    let selectors: EventSelector[];
    try {
      selectors = exported.on.map((entry) => parseEventName(entry, setup));
    } catch (error) {
      throw new ConfigError(`${where}: ${messageOf(error)}`);
    }
    let flow: FlowPlan | undefined;
    try {
      flow = parseFlowOptions(exported.flow ?? {});
    } catch (error) {
      throw new ConfigError(`${where}: ${messageOf(error)}`);
    }
    handlers.push({ name, file, definition: exported, selectors, env: readNamedSettings(where, exported.env, env), flow });
  }
  return handlers;
}

type EventFilter = (event: { payload: unknown }) => boolean;

/** `database:<op>:<table>`: only changes of that table (`orders` or `public.orders`). */
function tableFilter(table: string): EventFilter {
  return ({ payload }) => {
    const change = payload as { schema?: unknown; table?: unknown } | null;
    return change?.table === table || `${String(change?.schema)}.${String(change?.table)}` === table;
  };
}

/** What a project's handlers reach through the service: Stripe for thin events' objects, and where an `on` name's events arrive (`ctx.waitForEvent`). */
export interface ProjectHandlerServices {
  stripe?: StripeApi;
  resolveEventName?: (name: string) => { route: string; type: string };
}

const NO_RECEIVING_SETUP = (name: string): never => {
  throw new Error(`"${name}": this service was started without the project's senders`);
};

/** How the engine runs a project handler: its payload as the event, and the public context (`ctx.stripe` through the service's one client). */
function adapt(handler: ProjectHandler, services: ProjectHandlerServices): EventHandler {
  return (ctx) => {
    const { event } = ctx;
    const { step, sleep, sleepUntil, waitForEvent } = durableSteps(ctx, services.resolveEventName ?? NO_RECEIVING_SETUP, event.batch !== undefined);
    // Named, not spread in: V8 builds a literal that spreads an object and defines getters in about 18 µs, per delivery; this one in 2.
    const context: HandlerContext<string, string> = {
      step,
      sleep,
      sleepUntil,
      waitForEvent,
      db: ctx.db,
      get log() {
        return ctx.log;
      },
      get signal() {
        return ctx.signal;
      },
      attempt: event.attempts,
      debouncedEventIds: event.debouncedIds ?? [],
      handler: handler.name,
      event: stored(event),
      env: handler.env,
      stripe: stripeThinFetchers(event, services.stripe),
    };
    const batch = event.batch;
    if (!batch) return Promise.resolve(handler.definition.run(event.payload as never, context));
    // A batch handler: every member's payload, their stored events, and ctx.dead for one member alone.
    const members = new Set(batch.events.map((e) => e.id));
    const batchContext: BatchHandlerContext<string, string> = Object.assign(context, {
      events: batch.events.map(stored),
      dead(eventId: number, reason: string) {
        if (!members.has(eventId)) throw new Error(`ctx.dead: event ${eventId} is not in this batch (its ids are ctx.events[i].id).`);
        batch.dead.set(eventId, String(reason));
      },
    });
    const run = handler.definition.run as unknown as (events: unknown[], ctx: BatchHandlerContext<string, string>) => Promise<void> | void;
    return Promise.resolve(
      run(
        batch.events.map((e) => e.payload),
        batchContext,
      ),
    );
  };
}

/** The stored event a handler's context describes. */
const stored = (event: ClaimedEvent): StoredEvent => ({ id: event.id, key: event.key, source: event.source, type: event.type, receivedAt: event.receivedAt });

/**
 * Register a project's handlers: each runs isolated (in a savepoint), on
 * every (route, type) of its `on`; `services.stripe` (STRIPE_SECRET_KEY) is
 * what `ctx.stripe` fetches Stripe thin events' objects with.
 */
export function registerProjectHandlers(registry: HandlerRegistry, handlers: readonly ProjectHandler[], services: ProjectHandlerServices = {}): void {
  for (const handler of handlers) {
    const run = adapt(handler, services);
    const byType = new Map<string, { route: string; type: string; tables: Array<string | undefined> }>();
    for (const s of handler.selectors) {
      const entry = byType.get(`${s.route} ${s.type}`) ?? { route: s.route, type: s.type, tables: [] };
      entry.tables.push(s.table);
      byType.set(`${s.route} ${s.type}`, entry);
    }
    for (const { route, type, tables } of byType.values()) {
      const filters = tables.map((t) => (t === undefined ? undefined : tableFilter(t)));
      const accepts = filters.includes(undefined) ? undefined : (event: { payload: unknown }) => filters.some((f) => f!(event));
      // Without flow options of its own, a handler still takes each captured row's changes one at a time, in commit order (inbox/plan.ts).
      registry.on(route, type, run, { name: handler.name, isolated: true, accepts, flow: handler.flow });
    }
  }
}
