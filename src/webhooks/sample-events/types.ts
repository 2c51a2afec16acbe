/** The Clerk event types the shipped auth handler mirrors. */
export const CLERK_SAMPLE_TYPES = [
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
export const STRIPE_SAMPLE_TYPES = [
  'checkout.session.completed',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'invoice.paid',
  'invoice.payment_failed',
] as const;

/** The change types of a Supabase Database Webhook. */
export const SUPABASE_DATABASE_SAMPLE_TYPES = ['INSERT', 'UPDATE', 'DELETE'] as const;
