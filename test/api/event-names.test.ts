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
    expect(() => parseEventName('database:UPSERT', setup)).toThrow(/INSERT\|UPDATE\|DELETE/);
    expect(() => parseEventName('workos:user.created', setup)).toThrow(/set AUTH_PROVIDER=workos/);
    expect(() => parseEventName('stripe', setup)).toThrow(/must be "<provider>:<type>"/);
    expect(() => parseEventName(42, setup)).toThrow(/is a string/);
  });
});
