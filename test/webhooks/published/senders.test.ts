import { WebhookEventType } from '@polar-sh/sdk/models/components/webhookeventtype.js';
import { validateEvent, WebhookVerificationError } from '@polar-sh/sdk/webhooks.js';
import { Resend } from 'resend';
import { describe, expect, it } from 'vitest';
import { parseEventName } from '../../../src/api/event-names.js';
import { createTestApp } from '../../helpers/app.js';
import { SECRETS } from '../../helpers/config.js';
import { pgliteOnly, useTestDatabase } from '../../helpers/db.js';
import { svixDelivery } from '../../helpers/signed-deliveries.js';
import { deliverAll, problems, type PublishedDelivery } from './published.js';
import { RESEND_EVENT_DATA, resendEvent } from './resend-events.js';
import { exampleFromSchema, type ParsingSchema } from './schema-example.js';

/*
 * Polar and Resend, each with every event type its own npm package publishes:
 * @polar-sh/sdk's `WebhookEventType`, each body grown from the SDK's zod
 * schema for that payload (`Webhook…Payload$inboundSchema`, every required
 * field filled); resend's `WebhookEvent` union, each body typed as its
 * `WebhookEventPayload`. Signed as each sender signs (Polar: Standard
 * Webhooks over the secret's bytes; Resend: Svix), checked by the packages'
 * own verifiers, posted, stored once under the type and `ignored` (no
 * shipped handler reads either).
 */

const POLAR_SECRET = 'polar_whs_publishedsecretfortests0123456789';
const AT = '2025-06-01T12:00:00.000000Z';

/** Polar's payload schema for one `WebhookEventType` key (`SubscriptionPastDue` → `WebhookSubscriptionPastDuePayload$inboundSchema`). */
async function polarSchema(key: string): Promise<ParsingSchema> {
  const module = (await import(`@polar-sh/sdk/models/components/webhook${key.toLowerCase()}payload.js`)) as Record<string, ParsingSchema>;
  return module[`Webhook${key}Payload$inboundSchema`]!;
}

/** Whether the SDK's own `validateEvent` refuses the signature (a body it has no parser for is not a signature failure). */
function polarRefusesSignature(d: PublishedDelivery): boolean {
  try {
    validateEvent(d.body, d.headers, POLAR_SECRET);
    return false;
  } catch (error) {
    return error instanceof WebhookVerificationError;
  }
}

it("every published Polar and Resend type names a project handler's event (`polar:<type>`, `resend:<type>`)", () => {
  const setup = { providerOf: (route: string) => (route === 'payments' ? 'polar' : undefined), customRoutes: [] };
  const names = [...Object.values(WebhookEventType).map((t) => `polar:${t}`), ...Object.keys(RESEND_EVENT_DATA).map((t) => `resend:${t}`)];
  const parsed = names.map((name) => parseEventName(name, setup));
  expect(parsed.map(({ route, type }) => `${route === 'payments' ? 'polar' : route}:${type}`)).toEqual(names);
});

describe.each(pgliteOnly())('published Polar and Resend event types on $name', (kind) => {
  const tdb = useTestDatabase(kind);

  it("Polar: every WebhookEventType of @polar-sh/sdk, bodies from its zod schemas, signed over the secret's bytes", async () => {
    const types = Object.entries(WebhookEventType);
    expect(types.length).toBeGreaterThan(30);
    const signingKey = Buffer.from(POLAR_SECRET, 'utf8').toString('base64');
    const deliveries: PublishedDelivery[] = [];
    for (const [i, [key, type]] of types.entries()) {
      const body = exampleFromSchema(await polarSchema(key), { type, timestamp: AT, data: {} }, `polar ${type}`);
      const d = svixDelivery('payments', `msg_polar_published_${i}`, body, signingKey, 'webhook');
      deliveries.push({ label: `polar ${type}`, route: 'payments', body: d.body, headers: d.sign(Date.now()), key: d.key, type });
    }
    expect(deliveries.filter(polarRefusesSignature).map((d) => d.label)).toEqual([]);
    const t = createTestApp(tdb.db, { PAYMENTS_PROVIDER: 'polar', POLAR_WEBHOOK_SECRET: POLAR_SECRET, PAYMENTS_WEBHOOK_SECRET: '' });
    expect(problems(await deliverAll(t, tdb.db, deliveries, { providers: { payments: 'polar' } }))).toEqual([]);
  });

  it('Resend: every WebhookEvent of the resend package, typed as its WebhookEventPayload, signed as Svix signs', async () => {
    const types = Object.keys(RESEND_EVENT_DATA) as Array<keyof typeof RESEND_EVENT_DATA>;
    expect(types.length).toBeGreaterThan(30);
    const resend = new Resend('re_published_tests');
    const deliveries = types.map((type, i): PublishedDelivery => {
      const d = svixDelivery('resend', `msg_resend_published_${i}`, { ...resendEvent(type) }, SECRETS.resend);
      const headers = d.sign(Date.now());
      const signed = { id: headers['svix-id']!, timestamp: headers['svix-timestamp']!, signature: headers['svix-signature']! };
      expect(resend.webhooks.verify({ payload: d.body, headers: signed, webhookSecret: SECRETS.resend }).type).toBe(type);
      return { label: `resend ${type}`, route: 'resend', body: d.body, headers, key: d.key, type };
    });
    expect(problems(await deliverAll(createTestApp(tdb.db), tdb.db, deliveries))).toEqual([]);
  });
});
