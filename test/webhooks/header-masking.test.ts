import { describe, expect, it } from 'vitest';
import { isSecretHeader, maskedHeaders, PROVIDER_SIGNATURE_HEADERS } from '../../src/webhooks/request-record.js';

/** Credential-bearing headers senders and proxies add: none may be kept in clear. */
const CREDENTIALS: Record<string, string> = {
  'x-vercel-protection-bypass': 'bypass-secret-0123456789',
  'cf-access-jwt-assertion': 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.sig',
  'x-supabase-auth': 'supabase-auth-value',
  'x-auth-key': 'auth-key-value',
  'x-password': 'hunter2-hunter2',
  'x-passwd': 'passwd-value',
  'x-session-id': 'session-id-value',
  'x-credentials': 'user:pass',
  authorization: 'Bearer sk_live_never',
  'proxy-authorization': 'Basic dXNlcjpwYXNz',
  cookie: 'session=abc',
  'x-api-key': 'api-key-value',
  'x-access-token': 'access-token-value',
  'x-webhook-secret': 'webhook-secret-value',
};
/** Headers that carry nothing secret and stay readable. */
const HARMLESS: Record<string, string> = {
  'content-type': 'application/json',
  'user-agent': 'GitHub-Hookshot/abc123',
  'x-github-event': 'issues',
  'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
  'x-forwarded-for': '203.0.113.7',
  'svix-id': 'msg_2abc',
};

describe('the headers kept beside an event', () => {
  it('masks every credential-bearing header by its name, and leaves the harmless ones readable', () => {
    const kept = maskedHeaders(new Headers({ ...CREDENTIALS, ...HARMLESS }));
    for (const [name, value] of Object.entries(CREDENTIALS)) {
      expect(kept[name], name).toBe(`[masked, ${value.length} chars]`);
      expect(JSON.stringify(kept)).not.toContain(value);
    }
    for (const [name, value] of Object.entries(HARMLESS)) expect(kept[name], name).toBe(value);
  });

  it("keeps every shipped provider's signature header masked, and a sender's own credential header", () => {
    for (const name of PROVIDER_SIGNATURE_HEADERS) expect(isSecretHeader(name), name).toBe(true);
    expect(isSecretHeader('x-acme-proof')).toBe(false);
    expect(isSecretHeader('x-acme-proof', { credentialHeaders: ['x-acme-proof'] })).toBe(true);
  });
});
