import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEventName, type ReceivingSetup } from '../../src/api/event-names.js';
// @ts-expect-error -- a plain .mjs script without declarations
import { knownEventTypes, render } from '../../scripts/event-types.mjs';

const setup: ReceivingSetup = { providerOf: (route) => (route === 'payments' ? 'stripe' : route === 'auth' ? 'clerk' : undefined), customRoutes: ['orders'] };

describe('the event names a handler may take', () => {
  it('the lists of known types are what the installed stripe, @clerk/backend and @octokit/webhooks-types publish (run scripts/event-types.mjs after an upgrade)', () => {
    const current = readFileSync(join(import.meta.dirname, '..', '..', 'src', 'api', 'known-event-types.ts'), 'utf8');
    expect(current).toBe((render as (lists: unknown) => string)((knownEventTypes as () => unknown)()));
  });

  it('reads each provider, type and table, and says why one cannot be received', () => {
    expect(parseEventName('stripe:customer.subscription.updated', setup)).toEqual({
      name: 'stripe:customer.subscription.updated',
      route: 'payments',
      type: 'customer.subscription.updated',
    });
    expect(parseEventName('github:issues.opened', setup)).toMatchObject({ route: 'github', type: 'issues.opened' });
    expect(parseEventName('database:DELETE:public.orders', setup)).toMatchObject({ route: 'database', type: 'DELETE', table: 'public.orders' });
    expect(parseEventName('orders:order.shipped', setup)).toMatchObject({ route: 'orders', type: 'order.shipped' });
    expect(parseEventName('stripe:v1.invoice.paid', setup)).toEqual({ name: 'stripe:v1.invoice.paid', route: 'payments', type: 'v1.invoice.paid' });
    expect(parseEventName('stripe:v2.core.account.updated', setup)).toMatchObject({ route: 'payments', type: 'v2.core.account.updated' });
    expect(() => parseEventName('stripe:v1.invoice.payed', setup)).toThrow(/is not a Stripe event type .*nor a thin event type/);
    expect(() => parseEventName('clerk:user.create', setup)).toThrow(/is not a Clerk event type/);
    expect(() => parseEventName('github:issue.opened', setup)).toThrow(/"issue" is not a GitHub event name/);
    expect(() => parseEventName('github:issue.opened', setup)).toThrow(/Did you mean github:issues\.opened\?/);
    expect(() => parseEventName('database:UPSERT', setup)).toThrow(/INSERT\|UPDATE\|DELETE/);
    expect(() => parseEventName('workos:user.created', setup)).toThrow(/set AUTH_PROVIDER=workos/);
    expect(() => parseEventName('stripe', setup)).toThrow(/must be "<provider>:<type>"/);
    expect(() => parseEventName(42, setup)).toThrow(/is a string/);
  });

  it('refuses what the compiler refuses, with its "did you mean": a misspelled type, an action on a GitHub event without actions, an action the event lacks', () => {
    expect(() => parseEventName('clerk:user.craeted', setup)).toThrow(/"user\.craeted" is not a Clerk event type .*Did you mean clerk:user\.created\?/);
    expect(() => parseEventName('stripe:invoice.payed', setup)).toThrow(/Did you mean stripe:invoice\.paid\?/);
    expect(() => parseEventName('github:push.created', setup)).toThrow(/GitHub's "push" event has no actions\. Did you mean github:push\?/);
    expect(() => parseEventName('github:issues.opnd', setup)).toThrow(
      /"opnd" is not an action of GitHub's "issues" event \(assigned, .*\)\. Did you mean github:issues\.opened\?/,
    );
    expect(() => parseEventName('strip:invoice.paid', setup)).toThrow(/no provider "strip"\. Did you mean stripe:invoice\.paid\?/);
    expect(parseEventName('github:push', setup)).toMatchObject({ route: 'github', type: 'push' });
    expect(parseEventName('github:workflow_run.requested', setup)).toMatchObject({ type: 'workflow_run.requested' });
    // repository_dispatch's action is the sender's own event_type: any is accepted, as by the compiler.
    expect(parseEventName('github:repository_dispatch.deploy-now', setup)).toMatchObject({ type: 'repository_dispatch.deploy-now' });
  });
});
