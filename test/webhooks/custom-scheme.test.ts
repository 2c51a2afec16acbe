import { createHmac } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { ConfigError } from '../../src/errors.js';
import { buildOpenApiDocument } from '../../src/http/openapi.js';
import { customProvider } from '../../src/webhooks/providers/custom.js';
import { countEvents, createTestApp, type TestApp } from '../helpers/app.js';
import { pgliteOnly, useTestDatabase } from '../helpers/db.js';

const dir = mkdtempSync(join(tmpdir(), 'hookrun-custom-'));
const platform = (webhooks: unknown) => {
  const file = join(dir, `platform-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify({ webhooks }));
  return file;
};

const ACME = {
  route: 'acme',
  secretEnv: 'ACME_WEBHOOK_SECRET',
  algorithm: 'sha256',
  header: 'X-Acme-Signature',
  encoding: 'hex',
  prefix: 'v1=',
  timestampHeader: 'X-Acme-Timestamp',
  toleranceSeconds: 60,
  keyPath: 'event.id',
  typePath: 'event.kind',
};
const PLAIN = {
  route: 'ledger',
  secretEnv: 'LEDGER_SECRET',
  algorithm: 'sha512',
  header: 'X-Ledger-Hmac',
  encoding: 'base64',
  keyPath: 'id',
  typePath: 'type',
};
const FILE = platform([ACME, PLAIN]);

describe.each(pgliteOnly())('platform.json webhooks (a custom scheme) on $name', (kind) => {
  const tdb = useTestDatabase(kind);
  let t: TestApp;
  const post = (route: string, body: string, headers: Record<string, string>) =>
    t.app.request(`/webhooks/${route}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const code = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;
  const acmeSign = (body: string, at: number, secret = 'acme-secret') => ({
    'x-acme-timestamp': String(at),
    'x-acme-signature': `v1=${createHmac('sha256', secret).update(`${at}.${body}`).digest('hex')}`,
  });

  beforeEach(() => {
    t = createTestApp(tdb.db, { PLATFORM_CONFIG: FILE, ACME_WEBHOOK_SECRET: 'acme-secret', LEDGER_SECRET: 'ledger-secret' });
  });

  it('accepts what the scheme signs (timestamped, prefixed hex), keyed and typed by its JSON paths; a repeat is a duplicate', async () => {
    const body = JSON.stringify({ event: { id: 'ev_1', kind: 'invoice.settled' } });
    const now = Math.floor(t.clock.now() / 1000);
    expect((await post('acme', body, acmeSign(body, now))).status).toBe(200);
    expect(await (await post('acme', body, acmeSign(body, now))).json()).toMatchObject({ duplicate: true });
    expect(await tdb.db.query('SELECT source, key, type FROM hookrun.webhook_events')).toEqual([{ source: 'acme', key: 'ev_1', type: 'invoice.settled' }]);
  });

  it('refuses tampering, another secret, a stale time, no signature, and a body without the key', async () => {
    const body = JSON.stringify({ event: { id: 'ev_2', kind: 'x' } });
    const now = Math.floor(t.clock.now() / 1000);
    expect(await code(await post('acme', body.replace('ev_2', 'ev_3'), acmeSign(body, now)))).toBe('invalid_signature');
    expect(await code(await post('acme', body, acmeSign(body, now, 'other')))).toBe('invalid_signature');
    expect(await code(await post('acme', body, acmeSign(body, now - 61)))).toBe('timestamp_out_of_tolerance');
    expect(await code(await post('acme', body, {}))).toBe('missing_signature');
    const keyless = JSON.stringify({ event: { kind: 'x' } });
    expect(await code(await post('acme', keyless, acmeSign(keyless, now)))).toBe('invalid_payload');
    expect(await countEvents(tdb.db)).toBe(0);
  });

  it('a body-only scheme (base64 HMAC-SHA512) works, and send signs as the scheme says', async () => {
    const body = JSON.stringify({ id: 42, type: 'entry.posted' });
    const digest = createHmac('sha512', 'ledger-secret').update(body).digest('base64');
    expect((await post('ledger', body, { 'x-ledger-hmac': digest })).status).toBe(200);
    const ledger = t.config.customWebhooks.find((w) => w.route === 'ledger')!;
    const other = JSON.stringify({ id: 43, type: 'entry.posted' });
    expect(
      (
        await post(
          'ledger',
          other,
          customProvider(ledger).sign({ body: other, secret: 'ledger-secret', nowMs: t.clock.now(), messageId: 'm', url: '', type: '' }),
        )
      ).status,
    ).toBe(200);
    expect((await tdb.db.query<{ key: string }>("SELECT key FROM hookrun.webhook_events WHERE source = 'ledger' ORDER BY id")).map((r) => r.key)).toEqual([
      '42',
      '43',
    ]);
  });

  it('keys by the id as sent: 9007199254740993 and …992, 1, 1.0 and "1" are five events, each a duplicate only of itself', async () => {
    const ledger = (id: string) => `{"id": ${id}, "type": "entry.posted"}`;
    const hmac = (body: string) => ({ 'x-ledger-hmac': createHmac('sha512', 'ledger-secret').update(body).digest('base64') });
    const ids = ['9007199254740993', '9007199254740992', '1', '1.0', '"1"'];
    for (const id of ids) expect(await (await post('ledger', ledger(id), hmac(ledger(id)))).json()).toMatchObject({ duplicate: false });
    for (const id of ids) expect(await (await post('ledger', ledger(id), hmac(ledger(id)))).json()).toMatchObject({ duplicate: true });
    const keys = (await tdb.db.query<{ key: string }>("SELECT key FROM hookrun.webhook_events WHERE source = 'ledger' ORDER BY id")).map((r) => r.key);
    expect(keys).toEqual(['9007199254740993', '9007199254740992', '1', '1.0', '"1"']);
    // Nested paths, escaped names and repeated names (the last wins, as in the stored jsonb) read the same way.
    const nested = '{"event": {"kind": "a", "id": 18446744073709551617, "\\u0069d": "x"}, "event": {"kind": "b", "\\u0069d": 18446744073709551616}}';
    const now = Math.floor(t.clock.now() / 1000);
    expect((await post('acme', nested, acmeSign(nested, now))).status).toBe(200);
    expect(await tdb.db.query("SELECT key, type FROM hookrun.webhook_events WHERE source = 'acme'")).toEqual([{ key: '18446744073709551616', type: 'b' }]);
  });

  it('without its secret the route answers 503 not_configured naming the env; the OpenAPI document lists the route', async () => {
    const bare = createTestApp(tdb.db, { PLATFORM_CONFIG: FILE, ACME_WEBHOOK_SECRET: 'acme-secret' });
    const res = await bare.app.request('/webhooks/ledger', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('LEDGER_SECRET');
    const document = buildOpenApiDocument('0', t.config.customWebhooks.map(customProvider)) as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/webhooks/acme', '/webhooks/ledger']));
  });
});

describe('platform.json webhooks are validated at start-up', () => {
  it.each([
    [{ ...PLAIN, route: 'Bad Route' }, /webhooks\[0\]\.route: must be lower-case letters/],
    [{ ...PLAIN, route: 'payments' }, /webhooks\[0\]\.route: "payments" is a built-in receiver/],
    [{ ...PLAIN, algorithm: 'md5' }, /webhooks\[0\]\.algorithm: must be one of sha1, sha256, sha512/],
    [{ ...PLAIN, keyPath: 'a..b' }, /webhooks\[0\]\.keyPath: must be a dotted JSON path/],
    [{ ...PLAIN, toleranceSeconds: 0 }, /webhooks\[0\]\.toleranceSeconds/],
  ])('%j is refused with a message naming the field', (entry, message) => {
    const config = () => loadConfig({ PLATFORM_CONFIG: platform([entry]) });
    expect(config).toThrow(ConfigError);
    expect(config).toThrow(message);
  });

  it('refuses two entries with one route', () => {
    expect(() => loadConfig({ PLATFORM_CONFIG: platform([PLAIN, PLAIN]) })).toThrow(/webhooks\[1\]\.route: "ledger" is already used/);
  });
});
