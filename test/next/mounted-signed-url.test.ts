import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NextRoute } from '../../src/next/route.js';
import { callMounted, MOUNT, mountedRoute, ORIGIN } from '../console/console-mounted.js';
import { SECRETS } from '../helpers/config.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';

describe('a sender that signs the URL it called, under hookrun/next at a mount path', () => {
  let testDb: TestDatabase;
  let project: string;
  let route: NextRoute;
  beforeAll(async () => {
    testDb = await createPostgresDatabase();
    project = mkdtempSync(join(tmpdir(), 'hookrun-mounted-url-'));
    mkdirSync(join(project, 'jobs'));
    route = mountedRoute(testDb.url!, project, { TWILIO_AUTH_TOKEN: SECRETS.twilio });
  }, 60_000);
  afterAll(async () => {
    await testDb?.close();
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it('checks the Twilio signature against the URL Twilio called, mount path and query included', async () => {
    const form = { MessageSid: 'SM0123456789abcdef0123456789abcdef', MessageStatus: 'delivered', AccountSid: 'AC0123456789abcdef0123456789abcdef' };
    const url = `${ORIGIN}${MOUNT}/webhooks/twilio?tenant=acme`;
    const send = (signedFor: string) =>
      callMounted(route, url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': twilio.getExpectedTwilioSignature(SECRETS.twilio, signedFor, form),
        },
        body: new URLSearchParams(form).toString(),
      });
    const stored = await send(url);
    expect(stored.status, await stored.clone().text()).toBe(200);
    expect(await stored.json()).toMatchObject({ duplicate: false });
    // Signed for hookrun's own path without the mount: not the URL that was called.
    const wrong = await send(`${ORIGIN}/webhooks/twilio?tenant=acme`);
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: { code: 'invalid_signature' } });
  });
});
