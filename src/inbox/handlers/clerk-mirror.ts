import { z } from 'zod';
import { IDENTITY_MIRROR } from '../../db/identity-mirror.js';
import { parsePayload, type HandlerContext, type HandlerTable } from '../../deliveries/registry.js';

/**
 * Clerk (identity provider) events → users, organizations, memberships.
 * Clerk orders by the object's `updated_at` (ms); a `*.deleted` carries only
 * `{ deleted, id, object }`, so it is ordered by the event's `timestamp` (ms),
 * or by when we received it if an old payload has none. Writes are queued on
 * the batch (`IDENTITY_MIRROR`) and applied at its end, as the payments ones.
 * https://clerk.com/docs/webhooks/sync-data
 */

/** Year 3000 in ms: a later `updated_at` is a bug of the sender, and would outrank every real update for ever. */
const MAX_EPOCH_MS = 32_503_680_000_000;
const epochMs = z.number().int().nonnegative().max(MAX_EPOCH_MS, 'a time after the year 3000 (in ms since 1970)');
const id = z.string().min(1);

const userSchema = z.object({
  data: z.object({
    id,
    email_addresses: z.array(z.object({ id: z.string(), email_address: z.string() })).nullish(),
    primary_email_address_id: z.string().nullish(),
    first_name: z.string().nullish(),
    last_name: z.string().nullish(),
    updated_at: epochMs,
  }),
});

const organizationSchema = z.object({
  data: z.object({ id, name: z.string().nullish(), slug: z.string().nullish(), updated_at: epochMs }),
});

const membershipSchema = z.object({
  data: z.object({
    id,
    role: z.string().nullish(),
    organization: z.object({ id }),
    public_user_data: z.object({ user_id: id }),
    updated_at: epochMs,
  }),
});

/** Clerk types a deleted object's `id` as optional (`DeletedObjectJSON`): one without it names nothing to delete, and is not malformed. */
const deletedSchema = z.object({ data: z.object({ id: id.nullish() }), timestamp: epochMs.nullish() });

const deletedMembershipSchema = z.object({
  data: z.object({
    id,
    organization: z.object({ id }).nullish(),
    public_user_data: z.object({ user_id: id }).nullish(),
  }),
  timestamp: epochMs.nullish(),
});

/** What this mirror reads of each Clerk payload, so test/webhooks/published checks it against @clerk/backend's published types. */
export const CLERK_PAYLOADS = {
  user: userSchema,
  organization: organizationSchema,
  membership: membershipSchema,
  deleted: deletedSchema,
  deletedMembership: deletedMembershipSchema,
};

function deletedAt(ctx: HandlerContext, timestamp: number | null | undefined): Date {
  return timestamp != null ? new Date(timestamp) : ctx.event.receivedAt;
}

/** A delete without an id (Clerk's type allows it) is logged and left: there is no row to mark, and retrying will not add one. */
function deletedId(ctx: HandlerContext, value: string | null | undefined): value is string {
  if (value) return true;
  ctx.log.warn({ eventId: ctx.event.id, type: ctx.event.type }, 'Clerk delete without an id: nothing to mirror');
  return false;
}

function primaryEmail(data: z.output<typeof userSchema>['data']): string | null {
  const addresses = data.email_addresses ?? [];
  const primary = addresses.find((a) => a.id === data.primary_email_address_id) ?? addresses[0];
  return primary?.email_address ?? null;
}

async function upsertUserHandler(ctx: HandlerContext): Promise<void> {
  const { data } = parsePayload(userSchema, ctx.event);
  ctx.batch.of(IDENTITY_MIRROR).user({
    id: data.id,
    email: primaryEmail(data),
    firstName: data.first_name ?? null,
    lastName: data.last_name ?? null,
    at: new Date(data.updated_at),
  });
}

async function upsertOrganizationHandler(ctx: HandlerContext): Promise<void> {
  const { data } = parsePayload(organizationSchema, ctx.event);
  ctx.batch.of(IDENTITY_MIRROR).organization({ id: data.id, name: data.name ?? null, slug: data.slug ?? null, at: new Date(data.updated_at) });
}

async function upsertMembershipHandler(ctx: HandlerContext): Promise<void> {
  const { data } = parsePayload(membershipSchema, ctx.event);
  ctx.batch.of(IDENTITY_MIRROR).membership({
    id: data.id,
    organizationId: data.organization.id,
    userId: data.public_user_data.user_id,
    role: data.role ?? null,
    at: new Date(data.updated_at),
  });
}

/** The identity provider's handlers by Clerk event type. */
export const clerkMirrorHandlers: HandlerTable = {
  'user.created': upsertUserHandler,
  'user.updated': upsertUserHandler,
  'user.deleted': async (ctx) => {
    const payload = parsePayload(deletedSchema, ctx.event);
    if (deletedId(ctx, payload.data.id)) ctx.batch.of(IDENTITY_MIRROR).userDeleted({ id: payload.data.id, at: deletedAt(ctx, payload.timestamp) });
  },
  'organization.created': upsertOrganizationHandler,
  'organization.updated': upsertOrganizationHandler,
  'organization.deleted': async (ctx) => {
    const payload = parsePayload(deletedSchema, ctx.event);
    if (deletedId(ctx, payload.data.id)) ctx.batch.of(IDENTITY_MIRROR).organizationDeleted({ id: payload.data.id, at: deletedAt(ctx, payload.timestamp) });
  },
  'organizationMembership.created': upsertMembershipHandler,
  'organizationMembership.updated': upsertMembershipHandler,
  'organizationMembership.deleted': async (ctx) => {
    const { data, timestamp } = parsePayload(deletedMembershipSchema, ctx.event);
    ctx.batch.of(IDENTITY_MIRROR).membershipDeleted({
      id: data.id,
      organizationId: data.organization?.id ?? null,
      userId: data.public_user_data?.user_id ?? null,
      at: deletedAt(ctx, timestamp),
    });
  },
};
