import { z } from 'zod';
import { IDENTITY_MIRROR } from '../../db/identity-mirror.js';
import { parsePayload, type HandlerContext, type HandlerTable } from '../../deliveries/registry.js';

const workosUser = z.object({
  created_at: z.string().nullish(),
  data: z.object({
    id: z.string().min(1),
    email: z.string().nullish(),
    first_name: z.string().nullish(),
    last_name: z.string().nullish(),
    updated_at: z.string().min(1),
  }),
});

/** What this mirror reads of WorkOS's user events, so test/webhooks/published checks it against @workos-inc/node's published types. */
export const WORKOS_PAYLOADS = { user: workosUser };

const at = (value: string | null | undefined, fallback: Date) => {
  const date = value ? new Date(value) : fallback;
  return Number.isNaN(date.getTime()) ? fallback : date;
};

async function upsertWorkosUser(ctx: HandlerContext): Promise<void> {
  const { data } = parsePayload(workosUser, ctx.event);
  ctx.batch.of(IDENTITY_MIRROR).user({
    id: data.id,
    email: data.email ?? null,
    firstName: data.first_name ?? null,
    lastName: data.last_name ?? null,
    at: at(data.updated_at, ctx.event.receivedAt),
    provider: 'workos',
  });
}

/**
 * WorkOS users → `users` (provider `workos`), order-safe by the user's
 * `updated_at`; a delete is final, as Clerk's (AUTH_PROVIDER=workos).
 * https://workos.com/docs/events/user
 */
export const workosMirrorHandlers: HandlerTable = {
  'user.created': upsertWorkosUser,
  'user.updated': upsertWorkosUser,
  'user.deleted': async (ctx) => {
    const { data, created_at } = parsePayload(workosUser, ctx.event);
    ctx.batch.of(IDENTITY_MIRROR).userDeleted({ id: data.id, at: at(created_at, at(data.updated_at, ctx.event.receivedAt)), provider: 'workos' });
  },
};
