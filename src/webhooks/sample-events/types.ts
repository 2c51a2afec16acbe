import type { Source } from '../../config.js';

/** The Clerk event types the shipped auth handler mirrors. */
export const AUTH_SAMPLE_TYPES = [
  'user.created',
  'user.updated',
  'user.deleted',
  'organization.created',
  'organization.updated',
  'organization.deleted',
  'organizationMembership.created',
  'organizationMembership.updated',
  'organizationMembership.deleted',
] as const;

/** The Stripe event types the shipped payments handler mirrors. */
export const PAYMENTS_SAMPLE_TYPES = [
  'checkout.session.completed',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'invoice.paid',
  'invoice.payment_failed',
] as const;

/** The change types of a Supabase Database Webhook. */
export const DATABASE_SAMPLE_TYPES = ['INSERT', 'UPDATE', 'DELETE'] as const;

/**
 * Every event type `hookrun send` can build a full sample of, per source (the
 * types the shipped handlers know). Kept apart from the builders so the CLI
 * can print them without loading stripe-node (~300 ms) on every start.
 */
export const SAMPLE_TYPES: Record<Source, readonly string[]> = {
  payments: PAYMENTS_SAMPLE_TYPES,
  auth: AUTH_SAMPLE_TYPES,
  database: DATABASE_SAMPLE_TYPES,
};
