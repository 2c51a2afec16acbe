import { defineHandler } from 'hookrun';

/**
 * Once per Clerk user.created, after it is stored: where a product sends its
 * welcome email. `event` is @clerk/backend's own type for that event.
 */
export default defineHandler({
  on: ['clerk:user.created'],
  async run(event, ctx) {
    const email = event.data.email_addresses.find((a) => a.id === event.data.primary_email_address_id)?.email_address;
    ctx.log.info({ userId: event.data.id, email, attempt: ctx.attempt }, 'welcome email would be sent here');
  },
});
