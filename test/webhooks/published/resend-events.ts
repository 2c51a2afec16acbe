import type { WebhookEvent, WebhookEventPayload } from 'resend';

/** The `data` of Resend's event of type T, as the resend package types it. */
type ResendData<T extends WebhookEvent> = Extract<WebhookEventPayload, { type: T }>['data'];

const AT = '2025-06-01T12:00:00.000Z';
const email = {
  created_at: AT,
  email_id: 'em_published',
  message_id: '<published@example.com>',
  from: 'Hookrun <hello@example.com>',
  to: ['customer@example.com'],
  subject: 'Welcome',
};
const received = { ...email, bcc: [], cc: [], received_for: ['inbox@example.com'], attachments: [] };
const contact = {
  id: 'ct_published',
  audience_id: 'au_published',
  segment_ids: [],
  created_at: AT,
  updated_at: AT,
  email: 'customer@example.com',
  unsubscribed: false,
};
const record = { record: 'SPF', name: 'send', type: 'MX', ttl: 'Auto', status: 'verified', value: 'feedback-smtp.example.com', priority: 10 };
const domain = { id: 'dm_published', name: 'example.com', status: 'verified', created_at: AT, region: 'us-east-1', records: [record] };
const suppression = { id: 'sp_published', email: 'customer@example.com', origin: 'bounce' as const, source_id: null, created_at: AT };
const topic = {
  id: 'tp_published',
  name: 'Product news',
  description: null,
  default_subscription: 'opt_in' as const,
  deleted: false,
  created_at: AT,
  updated_at: AT,
};
const inbox = { source: 'api' as const, inbox_id: 'ib_published' };
const thread = { ...inbox, thread_id: 'th_published' };
const threadEmail = { ...thread, email_id: 'em_published' };
const draft = { ...inbox, thread_id: 'th_published', draft_id: 'dr_published' };
const label = { id: 'lb_published', name: 'Billing', color: '#E93D82' };

/**
 * One `data` per event type of the resend package's `WebhookEvent` union,
 * each of the type `WebhookEventPayload` gives that event: the mapped type
 * makes `npm run typecheck` fail when a resend bump adds a type or changes a
 * shape, so the list below is always the published one.
 */
export const RESEND_EVENT_DATA: { [T in WebhookEvent]: ResendData<T> } = {
  'email.sent': email,
  'email.scheduled': email,
  'email.delivered': email,
  'email.delivery_delayed': email,
  'email.complained': email,
  'email.bounced': { ...email, bounce: { message: 'The recipient mailbox does not exist.', subType: 'General', type: 'Permanent' } },
  'email.opened': email,
  'email.clicked': { ...email, click: { ipAddress: '203.0.113.7', link: 'https://example.com/', timestamp: AT, userAgent: 'Mozilla/5.0' } },
  'email.received': received,
  'email.failed': { ...email, failed: { reason: 'reached_daily_quota' } },
  'email.suppressed': { ...email, suppressed: { message: 'The recipient is on the suppression list.', type: 'OnAccountSuppressionList' } },
  'contact.created': contact,
  'contact.updated': contact,
  'contact.deleted': contact,
  'contact.topics.updated': { email: 'customer@example.com', topics: [{ id: 'tp_published', subscription: 'opt_out' }] },
  'domain.created': domain,
  'domain.updated': domain,
  'domain.deleted': domain,
  'suppression.added': suppression,
  'suppression.removed': suppression,
  'topic.created': topic,
  'topic.updated': topic,
  'topic.deleted': { ...topic, deleted: true },
  'inbox.created': inbox,
  'inbox.updated': inbox,
  'inbox.deleted': inbox,
  'inbox.thread.created': threadEmail,
  'inbox.thread.folder.updated': { ...thread, from: 'inbox', to: 'archive' },
  'inbox.thread.assigned': { ...thread, assignee_email: 'agent@example.com', assigned_by_email: null, previous_assignee_email: null },
  'inbox.thread.unassigned': { ...thread, previous_assignee_email: 'agent@example.com' },
  'inbox.thread.labels.updated': { ...thread, added: [label], removed: [] },
  'inbox.email.received': threadEmail,
  'inbox.email.sent': threadEmail,
  'inbox.draft.created': draft,
  'inbox.draft.updated': draft,
  'inbox.draft.sent': { ...threadEmail, draft_id: 'dr_published' },
  'inbox.draft.deleted': draft,
};

/** Resend's envelope around one event's data: `{ type, created_at, data }`, typed as the package's `WebhookEventPayload`. */
export function resendEvent<T extends WebhookEvent>(type: T, createdAt: string = AT): WebhookEventPayload {
  return { type, created_at: createdAt, data: RESEND_EVENT_DATA[type] } as WebhookEventPayload;
}
