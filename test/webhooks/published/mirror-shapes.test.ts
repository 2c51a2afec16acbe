import type { WebhookEvent } from '@clerk/backend';
import type { Subscription as LemonSubscription } from '@lemonsqueezy/lemonsqueezy.js';
import type {
  EventName,
  ICustomerNotificationResponse,
  ISubscriptionCreatedNotificationResponse,
  ISubscriptionNotificationResponse,
} from '@paddle/paddle-node-sdk';
import type { EventResponse as WorkosEvent } from '@workos-inc/node';
import type Stripe from 'stripe';
import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import { CLERK_PAYLOADS } from '../../../src/inbox/handlers/clerk-mirror.js';
import { LEMONSQUEEZY_PAYLOADS } from '../../../src/inbox/handlers/lemonsqueezy-mirror.js';
import { PADDLE_PAYLOADS } from '../../../src/inbox/handlers/paddle-mirror.js';
import { checkoutSession, customer, envelope, invoice, subscription } from '../../../src/inbox/handlers/stripe-objects.js';
import { WORKOS_PAYLOADS } from '../../../src/inbox/handlers/workos-mirror.js';

/*
 * The shipped mirrors against the providers' published schemas: for each
 * event type a mirror reads, every payload the provider's own package types
 * allow must be one the mirror's schema accepts, or a valid delivery could go
 * `dead` (MalformedPayloadError). These are compile-time checks (`npm run
 * typecheck` fails on a mismatch); the providers publish types, not example
 * payloads, on npm. Bump a provider package and this file re-checks the mirror.
 */

type Input<S extends z.ZodType> = z.input<S>;
/** Clerk's event of type T (its union lists several types per payload: `Webhook<'a' | 'b', JSON>`). */
type Clerk<T extends WebhookEvent['type']> = WebhookEvent extends infer E
  ? E extends { type: infer U }
    ? T extends U
      ? Omit<E, 'type'> & { type: T }
      : never
    : never
  : never;
type Workos<T extends WorkosEvent['event']> = Extract<WorkosEvent, { event: T }>;
/** A Paddle notification as posted: the envelope around the entity the SDK types. */
type Paddle<T> = { event_id: string; event_type: `${EventName}`; occurred_at: string; notification_id: string; data: T };
/** A Stripe event around one object (stripe-node's `Stripe.Event` with that object). */
type StripeEvent<T> = Omit<Stripe.Event, 'data'> & { data: { object: T } };
/** Lemon Squeezy's webhook body: `meta` plus the resource, as its API returns it. */
type Lemon<T extends { data: unknown }> = { meta: { event_name: string; custom_data?: Record<string, unknown> }; data: T['data'] };

describe("the shipped mirrors accept every payload the providers' published types allow", () => {
  it('Stripe (stripe-node): checkout sessions, subscriptions, invoices, and the API path customer', () => {
    expectTypeOf<StripeEvent<Stripe.Checkout.Session>>().toExtend<Input<ReturnType<typeof envelope<typeof checkoutSession>>>>();
    expectTypeOf<StripeEvent<Stripe.Subscription>>().toExtend<Input<ReturnType<typeof envelope<typeof subscription>>>>();
    expectTypeOf<StripeEvent<Stripe.Invoice>>().toExtend<Input<ReturnType<typeof envelope<typeof invoice>>>>();
    expectTypeOf<Stripe.Customer>().toExtend<Input<typeof customer>>();
  });

  it('Clerk (@clerk/backend WebhookEvent): users, organizations, memberships and their deletes', () => {
    expectTypeOf<Clerk<'user.created' | 'user.updated'>>().toExtend<Input<typeof CLERK_PAYLOADS.user>>();
    expectTypeOf<Clerk<'user.deleted'>>().toExtend<Input<typeof CLERK_PAYLOADS.deleted>>();
    expectTypeOf<Clerk<'organization.created' | 'organization.updated'>>().toExtend<Input<typeof CLERK_PAYLOADS.organization>>();
    expectTypeOf<Clerk<'organization.deleted'>>().toExtend<Input<typeof CLERK_PAYLOADS.deleted>>();
    expectTypeOf<Clerk<'organizationMembership.created' | 'organizationMembership.updated'>>().toExtend<Input<typeof CLERK_PAYLOADS.membership>>();
    expectTypeOf<Clerk<'organizationMembership.deleted'>>().toExtend<Input<typeof CLERK_PAYLOADS.deletedMembership>>();
  });

  it('Paddle (@paddle/paddle-node-sdk): subscription and customer notifications', () => {
    expectTypeOf<Paddle<ISubscriptionNotificationResponse>>().toExtend<Input<typeof PADDLE_PAYLOADS.subscription>>();
    expectTypeOf<Paddle<ISubscriptionCreatedNotificationResponse>>().toExtend<Input<typeof PADDLE_PAYLOADS.subscription>>();
    expectTypeOf<Paddle<ICustomerNotificationResponse>>().toExtend<Input<typeof PADDLE_PAYLOADS.customer>>();
  });

  it('WorkOS (@workos-inc/node EventResponse): user events', () => {
    expectTypeOf<Workos<'user.created' | 'user.updated' | 'user.deleted'>>().toExtend<Input<typeof WORKOS_PAYLOADS.user>>();
  });

  it('Lemon Squeezy (@lemonsqueezy/lemonsqueezy.js): subscription events', () => {
    expectTypeOf<Lemon<LemonSubscription>>().toExtend<Input<typeof LEMONSQUEEZY_PAYLOADS.subscription>>();
  });
});
