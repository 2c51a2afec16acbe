import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeDatabase } from '../../src/cli/check.js';
import { loadConfig } from '../../src/config/config.js';
import { loadDotEnvFile } from '../../src/config/dot-env.js';
import { ConfigError } from '../../src/errors.js';
import { createVerifiers } from '../../src/webhooks/verifiers.js';
import { runCliInProcess } from '../helpers/cli.js';

const base = { PLATFORM_CONFIG: '/nonexistent/platform.json' };

describe('hookrun check shows the database without its password', () => {
  it('masks the password in the URL and in a password-like query parameter', () => {
    const shown = describeDatabase({
      databaseUrl: 'postgres://app:hunter22@db.example:5432/app?sslmode=require&password=hunter33&sslpassword=k3y',
      dataDir: '',
    });
    expect(shown.location).not.toMatch(/hunter22|hunter33|k3y/);
    expect(shown.location).toContain('sslmode=require');
  });
});

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig(base, '/srv/app');
    expect(config).toMatchObject({
      port: 3002,
      databaseUrl: undefined,
      dataDir: '/srv/app/.data',
      scheduler: true,
      toleranceSeconds: 300,
      maxBodyBytes: 1024 * 1024,
      maxAttempts: 10,
      leaseSeconds: 30,
      crons: [],
    });
    expect(config.secrets).toEqual({ payments: undefined, auth: undefined, database: undefined });
  });

  it('takes the first secret env name found and splits rotation lists', () => {
    const config = loadConfig({ ...base, STRIPE_WEBHOOK_SECRET: 'whsec_b', PAYMENTS_WEBHOOK_SECRET: ' whsec_a , whsec_c ' });
    expect(config.secrets.payments).toEqual({ envName: 'PAYMENTS_WEBHOOK_SECRET', values: ['whsec_a', 'whsec_c'] });
    const alias = loadConfig({ ...base, CLERK_WEBHOOK_SECRET: 'whsec_x', CLERK_WEBHOOK_SIGNING_SECRET: 'whsec_y' });
    expect(alias.secrets.auth).toEqual({ envName: 'CLERK_WEBHOOK_SIGNING_SECRET', values: ['whsec_y'] });
  });

  it.each([
    [{ PORT: 'abc' }, /PORT="abc" is not valid/],
    [{ PORT: '70000' }, /PORT/],
    [{ SCHEDULER: 'maybe' }, /SCHEDULER="maybe".*"off"/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL="loud"/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must start with postgres/],
    [{ WEBHOOK_TOLERANCE_SECONDS: '0' }, /WEBHOOK_TOLERANCE_SECONDS/],
    [{ ADMIN_TOKEN: 'abc' }, /ADMIN_TOKEN is shorter than 32 characters/],
    [{ ADMIN_TOKEN: 'a'.repeat(31) }, /ADMIN_TOKEN is shorter than 32 characters/],
    [{ METRICS_TOKEN: 'scrape-me' }, /METRICS_TOKEN is shorter than 32 characters/],
    [{ DATABASE_WEBHOOK_SECRET: 'short-bearer' }, /DATABASE_WEBHOOK_SECRET is shorter than 32 characters/],
    [{ DATABASE_WEBHOOK_SECRET: `${'b'.repeat(32)},old` }, /DATABASE_WEBHOOK_SECRET is shorter than 32 characters/],
    [{ STRIPE_SECRET_KEY: 'pk_test_publishable' }, /STRIPE_SECRET_KEY must be a Stripe secret or restricted key/],
    [{ STRIPE_API_BASE: 'http://127.0.0.1:12111' }, /STRIPE_API_BASE is set but STRIPE_SECRET_KEY is not/],
    [{ STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_API_BASE: 'http://127.0.0.1:12111/v1' }, /STRIPE_API_BASE=.* use an origin/],
    [{ STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_API_BASE: 'ftp://stripe' }, /STRIPE_API_BASE=/],
    [
      { STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_API_BASE: 'http://stripe-proxy.internal:8080' },
      /STRIPE_API_BASE=http:\/\/stripe-proxy\.internal:8080 would send STRIPE_SECRET_KEY unencrypted: use https:\/\//,
    ],
    [{ STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_API_BASE: 'http://10.0.0.7' }, /would send STRIPE_SECRET_KEY unencrypted/],
    [{ STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_API_BASE: 'http://127.0.0.1.example.com' }, /would send STRIPE_SECRET_KEY unencrypted/],
    [{ DATABASE_URL: 'postgres://x/db', DATABASE_POOLER: 'pgbouncer' }, /DATABASE_POOLER="pgbouncer" is not valid: use transaction/],
    [{ DATABASE_URL: 'postgres://x/db', DATABASE_DIRECT_URL: 'db.example.com:5432' }, /DATABASE_DIRECT_URL must start with postgres/],
    [{ DATABASE_POOLER: 'transaction' }, /describe DATABASE_URL, which is unset/],
    [
      { DATABASE_URL: 'postgres://x/db', DATABASE_POOLER: 'transaction', DATABASE_PREPARED_STATEMENTS: 'on' },
      /DATABASE_PREPARED_STATEMENTS=on does not work with DATABASE_POOLER=transaction.*Set DATABASE_PREPARED_STATEMENTS=off/,
    ],
    [{ CHANGES_DATABASE_URL: 'mysql://shop' }, /CHANGES_DATABASE_URL must start with postgres/],
    [{ CHANGES_DATABASE_URL: 'postgres://x/shop', CHANGES_SLOT: 'My-Slot' }, /CHANGES_SLOT="My-Slot" is not a valid slot name/],
    [{ CHANGES_DATABASE_URL: 'postgres://x/shop', CHANGES_PUBLICATION: "p', x '1" }, /CHANGES_PUBLICATION=.* is not a plain identifier/],
    [{ CHANGES_DATABASE_URL: 'postgres://x/shop', CHANGES_MAX_RETAINED_WAL_MB: '0' }, /CHANGES_MAX_RETAINED_WAL_MB/],
  ])('stops on a wrong setting %j with a message naming it', (env, message) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, ...env })).toThrow(message);
  });

  it('reads STRIPE_SECRET_KEY and STRIPE_API_BASE (unset: no Stripe API calls)', () => {
    expect(loadConfig(base).stripe).toBeUndefined();
    const config = loadConfig({ ...base, STRIPE_SECRET_KEY: ' rk_live_abc ', STRIPE_API_BASE: 'http://127.0.0.1:12111' });
    expect(config.stripe).toEqual({ secretKey: 'rk_live_abc', apiBase: new URL('http://127.0.0.1:12111') });
    // Plain http only to this machine; https anywhere.
    for (const origin of ['http://localhost:12111', 'http://[::1]:12111', 'http://127.8.9.10', 'https://stripe-proxy.internal:8443']) {
      expect(loadConfig({ ...base, STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_API_BASE: origin }).stripe?.apiBase).toEqual(new URL(origin));
    }
  });

  it('reads DATABASE_POOLER and DATABASE_DIRECT_URL (default: a direct connection)', () => {
    expect(loadConfig({ ...base, DATABASE_URL: 'postgres://u@db/app' }).pooler).toEqual({ mode: 'none', directUrl: undefined });
    expect(
      loadConfig({ ...base, DATABASE_URL: 'postgres://u@pooler:6543/app', DATABASE_POOLER: 'transaction', DATABASE_DIRECT_URL: 'postgres://u@db:5432/app' })
        .pooler,
    ).toEqual({ mode: 'transaction', directUrl: 'postgres://u@db:5432/app' });
  });

  it('prepares statements on a direct connection or a pooler in session mode, and the CLI stops (exit 78) on one in transaction mode', async () => {
    const direct = { ...base, DATABASE_URL: 'postgres://u@db/app' };
    expect(loadConfig(direct).preparedStatements).toBe(true); // the default
    expect(loadConfig({ ...direct, DATABASE_POOLER: 'transaction' }).preparedStatements).toBe(false); // its default there
    expect(loadConfig({ ...direct, DATABASE_PREPARED_STATEMENTS: 'off' }).preparedStatements).toBe(false);
    const onPostgres = { ...direct, DATABASE_PREPARED_STATEMENTS: 'on' };
    expect(loadConfig(onPostgres).preparedStatements).toBe(true);
    expect(loadConfig({ ...onPostgres, DATABASE_POOLER: 'session' }).preparedStatements).toBe(true);
    expect(loadConfig({ ...onPostgres, DATABASE_POOLER: 'transaction', DATABASE_PREPARED_STATEMENTS: 'off' }).preparedStatements).toBe(false);
    const refused = await runCliInProcess(['check'], { ...onPostgres, DATABASE_POOLER: 'transaction' }, tmpdir());
    expect(refused.code).toBe(78);
    expect(refused.stderr).toContain('DATABASE_PREPARED_STATEMENTS=on does not work with DATABASE_POOLER=transaction');
  });

  it('reads the WAL capture settings (unset CHANGES_DATABASE_URL: no capture)', () => {
    expect(loadConfig(base).changes).toBeUndefined();
    expect(loadConfig({ ...base, CHANGES_DATABASE_URL: 'postgres://u:p@db/shop' }).changes).toEqual({
      databaseUrl: 'postgres://u:p@db/shop',
      publication: 'hookrun_changes',
      slot: 'hookrun_changes',
      maxRetainedWalBytes: 1024 * 1024 * 1024,
    });
  });

  it.each([
    [{ cron: [] }, /platform\.json: "cron" is not a platform\.json key; did you mean "crons"\?/],
    [
      { crons: [{ path: '/cron/keep-alive', schedule: '0 1 * * *', every: 'day' }] },
      /platform\.json crons\[0\]\.every: not a cron entry field \(use path, name/,
    ],
    [{ crons: [{ path: '/cron/keep-alive', schedule: '0 1 * * *', retries: 2 }] }, /crons\[0\]\.retries: a job file sets its policies in defineJob/],
    [
      { webhooks: [{ route: 'acme', secretEnv: 'ACME_SECRET', header: 'X-Sig', keyPath: 'id', typePath: 'type', toleranceSeconds: 0 }] },
      /webhooks\[0\]\.toleranceSeconds: must be a whole number of seconds from 1 to 86400/,
    ],
    [{ builtInHandlers: { 'stripe-mirror': 'no' } }, /builtInHandlers\.stripe-mirror: must be an object of handler names to true or false/],
  ])('platform.json %j stops start-up with a message naming the key', (file, message) => {
    const path = join(mkdtempSync(join(tmpdir(), 'hookrun-config-')), 'platform.json');
    writeFileSync(path, JSON.stringify(file));
    expect(() => loadConfig({ PLATFORM_CONFIG: path })).toThrow(message);
  });

  it('reads platform.json crons, and names the file when it is not JSON', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookrun-config-'));
    const good = join(dir, 'platform.json');
    writeFileSync(good, JSON.stringify({ crons: [{ path: '/cron/keep-alive', schedule: '0 1 * * *' }] }));
    expect(loadConfig({ PLATFORM_CONFIG: good }).crons).toEqual([{ path: '/cron/keep-alive', schedule: '0 1 * * *' }]);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{ crons: ');
    expect(() => loadConfig({ PLATFORM_CONFIG: bad })).toThrow(/bad\.json: is not valid JSON/);
  });

  it('refuses an auth secret that is not a Standard Webhooks key at start-up, without echoing it', () => {
    const config = loadConfig({ ...base, AUTH_WEBHOOK_SECRET: 'whsec_%%%not-base64%%%' });
    expect(() => createVerifiers(config)).toThrow(ConfigError);
    try {
      createVerifiers(config);
    } catch (error) {
      expect((error as Error).message).toContain('AUTH_WEBHOOK_SECRET');
      expect((error as Error).message).not.toContain('%%%not-base64%%%');
    }
  });

  it('reads .env from the working directory without overriding the environment', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookrun-dotenv-'));
    writeFileSync(join(dir, '.env'), 'HOOKRUN_TEST_FROM_FILE=file\nHOOKRUN_TEST_BOTH=file\n');
    process.env.HOOKRUN_TEST_BOTH = 'env';
    try {
      loadDotEnvFile(dir);
      expect(process.env.HOOKRUN_TEST_FROM_FILE).toBe('file');
      expect(process.env.HOOKRUN_TEST_BOTH).toBe('env');
    } finally {
      delete process.env.HOOKRUN_TEST_FROM_FILE;
      delete process.env.HOOKRUN_TEST_BOTH;
    }
  });
});
