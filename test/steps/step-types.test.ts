import { describe, expect, expectTypeOf, it } from 'vitest';
import { defineHandler } from '../../src/index.js';

/*
 * What a project's TypeScript infers from steps (checked by `npm run
 * typecheck`, which covers test/): a step returns its function's awaited
 * type, a wait the event type its `on` names, or null.
 */
describe('the types of steps', () => {
  it("ctx.step returns its function's awaited type; ctx.waitForEvent the event of its `on` or null", () => {
    const handler = defineHandler({
      on: ['stripe:checkout.session.completed'],
      async run(event, ctx) {
        const account = await ctx.step('create-account', async () => ({ id: 'acct_1', seats: 3 }));
        expectTypeOf(account).toEqualTypeOf<{ id: string; seats: number }>();
        const count = await ctx.step('count', () => 3);
        expectTypeOf(count).toEqualTypeOf<number>();
        const nothing = await ctx.step('email', async () => {});
        expectTypeOf(nothing).toEqualTypeOf<void>();
        await ctx.sleep('wait', '1d');
        await ctx.sleepUntil('then', new Date());
        const paid = await ctx.waitForEvent('paid', { on: 'stripe:invoice.paid', match: 'data.object.customer', timeout: '1d' });
        expectTypeOf(paid).toEqualTypeOf<Extract<import('stripe').Stripe.Event, { type: 'invoice.paid' }> | null>();
        // @ts-expect-error an event name no sender has is refused by the compiler too
        await ctx.waitForEvent('typo', { on: 'stripe:invoice.payed', match: 'data.object.customer', timeout: '1d' });
        // @ts-expect-error a step's options are attempts and backoff
        await ctx.step('x', () => 1, { retries: 3 });
        void event;
      },
    });
    expect(handler.on).toEqual(['stripe:checkout.session.completed']);
  });
});
