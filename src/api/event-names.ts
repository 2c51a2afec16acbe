import { nearestKey } from '../nearest-key.js';
import { CLERK_EVENT_TYPES, GITHUB_EVENT_ACTIONS, STRIPE_EVENT_TYPES, STRIPE_THIN_EVENT_TYPES } from './known-event-types.js';

/** Where one `<provider>:<type>` of a handler's `on` list is received and stored. */
export interface EventSelector {
  /** As written in `on`. */
  name: string;
  /** The route (and `source` column) its events arrive on. */
  route: string;
  /** The stored event type. */
  type: string;
  /** `database:` only: the table (`orders` or `public.orders`) whose changes it takes. */
  table?: string;
}

/** Which route and provider each `on` prefix means. */
export const EVENT_PREFIXES: Readonly<Record<string, { route: string; provider: string }>> = {
  stripe: { route: 'payments', provider: 'stripe' },
  paddle: { route: 'payments', provider: 'paddle' },
  lemonsqueezy: { route: 'payments', provider: 'lemonsqueezy' },
  polar: { route: 'payments', provider: 'polar' },
  clerk: { route: 'auth', provider: 'clerk' },
  workos: { route: 'auth', provider: 'workos' },
  'supabase-auth': { route: 'auth', provider: 'supabase' },
  database: { route: 'database', provider: 'supabase' },
  github: { route: 'github', provider: 'github' },
  shopify: { route: 'shopify', provider: 'shopify' },
  resend: { route: 'resend', provider: 'resend' },
  twilio: { route: 'twilio', provider: 'twilio' },
};

/** What a project receives: the provider chosen on each route that offers a choice, and its own senders' routes. */
export interface ReceivingSetup {
  providerOf(route: string): string | undefined;
  customRoutes: readonly string[];
}

const TYPE = /^[\w.:/-]{1,200}$/;
const TABLE = /^[A-Za-z_][\w$]*(\.[A-Za-z_][\w$]*)?$/;
const OPERATIONS = ['INSERT', 'UPDATE', 'DELETE'];

/** ` Did you mean <name>?` when a known one is within a few edits of `given` (spelled whole by `spell`), as the compiler offers; '' otherwise. */
function didYouMean(given: string, known: readonly string[], spell: (near: string) => string): string {
  const near = nearestKey(given, known);
  return near === undefined ? '' : ` Did you mean ${spell(near)}?`;
}

/** Why `github:<type>` is not one the compiler accepts (src/api/event-types.ts `GithubName`): the event, then its action. */
function knownGithubType(type: string): string | undefined {
  const dot = type.indexOf('.');
  const event = dot < 0 ? type : type.slice(0, dot);
  const action = dot < 0 ? undefined : type.slice(dot + 1);
  const actions = GITHUB_EVENT_ACTIONS[event];
  if (actions === undefined) {
    const events = Object.keys(GITHUB_EVENT_ACTIONS);
    return `"${event}" is not a GitHub event name (e.g. push, issues.opened).${didYouMean(event, events, (near) => `github:${near}${action === undefined ? '' : `.${action}`}`)}`;
  }
  if (action === undefined || actions === null || actions.includes(action)) return undefined;
  if (actions.length === 0) return `GitHub's "${event}" event has no actions. Did you mean github:${event}?`;
  return `"${action}" is not an action of GitHub's "${event}" event (${actions.join(', ')}).${didYouMean(action, actions, (near) => `github:${event}.${near}`)}`;
}

function knownType(prefix: string, type: string): string | undefined {
  if (prefix === 'stripe' && !STRIPE_EVENT_TYPES.includes(type) && !STRIPE_THIN_EVENT_TYPES.includes(type))
    return `"${type}" is not a Stripe event type (see https://docs.stripe.com/api/events/types), nor a thin event type (v1.…, v2.…; https://docs.stripe.com/event-destinations#thin-payload).${didYouMean(type, [...STRIPE_EVENT_TYPES, ...STRIPE_THIN_EVENT_TYPES], (near) => `stripe:${near}`)}`;
  if (prefix === 'clerk' && !CLERK_EVENT_TYPES.includes(type))
    return `"${type}" is not a Clerk event type (e.g. user.created, organizationMembership.deleted).${didYouMean(type, CLERK_EVENT_TYPES, (near) => `clerk:${near}`)}`;
  if (prefix === 'github') return knownGithubType(type);
  return undefined;
}

/**
 * Read one entry of a handler's `on` list, e.g. `stripe:invoice.paid`,
 * `clerk:user.created`, `github:issues.opened`, `database:INSERT:orders`,
 * `orders:order.shipped` (a platform.json sender). Throws with the fix when
 * the provider does not exist, is not the one its route is set to receive,
 * or the type is not one the provider publishes.
 */
export function parseEventName(name: unknown, setup: ReceivingSetup): EventSelector {
  if (typeof name !== 'string') throw new TypeError(`each entry of "on" is a string "<provider>:<type>", not ${JSON.stringify(name)}`);
  const colon = name.indexOf(':');
  const prefix = colon < 0 ? name : name.slice(0, colon);
  const rest = colon < 0 ? '' : name.slice(colon + 1);
  if (colon < 0 || rest === '') throw new TypeError(`"${name}" must be "<provider>:<type>", e.g. "stripe:invoice.paid" or "clerk:user.created"`);
  if (prefix === 'database') {
    const [operation, table, extra] = rest.split(':');
    if (!OPERATIONS.includes(operation!) || extra !== undefined || (table !== undefined && !TABLE.test(table))) {
      throw new TypeError(`"${name}" must be "database:<INSERT|UPDATE|DELETE>" with an optional ":<table>" or ":<schema>.<table>"`);
    }
    return { name, route: 'database', type: operation!, ...(table === undefined ? {} : { table }) };
  }
  if (!TYPE.test(rest)) throw new TypeError(`"${name}": the type "${rest}" must be 1-200 letters, digits and . _ - : /`);
  const known = EVENT_PREFIXES[prefix];
  if (known === undefined) {
    if (setup.customRoutes.includes(prefix)) return { name, route: prefix, type: rest };
    const all = [...Object.keys(EVENT_PREFIXES), ...setup.customRoutes].join(', ');
    const near = nearestKey(prefix, [...Object.keys(EVENT_PREFIXES), ...setup.customRoutes]);
    throw new TypeError(
      `"${name}": no provider "${prefix}".${near === undefined ? '' : ` Did you mean ${near}:${rest}?`} Use one of: ${all} (a platform.json sender by its route).`,
    );
  }
  const unknown = knownType(prefix, rest);
  if (unknown) throw new TypeError(`"${name}": ${unknown}`);
  const chosen = setup.providerOf(known.route);
  if (chosen !== undefined && chosen !== known.provider) {
    throw new TypeError(
      `"${name}": /webhooks/${known.route} receives ${chosen} events here; set ${known.route.toUpperCase()}_PROVIDER=${known.provider} to receive ${prefix} events, ` +
        'or serve a project without this handler (hookrun start --project <dir>)',
    );
  }
  return { name, route: known.route, type: rest };
}
