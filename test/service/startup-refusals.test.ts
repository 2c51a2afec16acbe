import { createServer, type Server } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { runHookrun, seedDataDir } from '../helpers/spawn-hookrun.js';

/**
 * What a new user gets wrong on the first start: each stops start-up with one
 * line saying what to set, exit 78 (EX_CONFIG), no stack trace, no secret.
 */
describe('start-up refusals a new user meets (spawned hookrun start)', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-refusals-'));
  const dataDir = join(dir, 'data');

  beforeAll(async () => {
    await Promise.all([ensureDistBuilt(), seedDataDir(dataDir)]);
  }, 120_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const start = (env: Record<string, string | undefined>) => runHookrun({ dataDir, env, timeoutMs: 60_000 });
  const expectRefused = (result: { code: number | null; output: string }, says: RegExp) => {
    expect(result.code, result.output).toBe(78);
    expect(result.output).toMatch(says);
    expect(result.output).not.toMatch(/\n\s+at /); // no stack trace
  };

  it('an unknown top-level key in platform.json ("cron" for "crons") names the nearest known key', async () => {
    const file = join(dir, 'platform.json');
    writeFileSync(file, JSON.stringify({ cron: [{ path: '/cron/keep-alive', schedule: '0 1 * * *' }] }));
    expectRefused(await start({ PLATFORM_CONFIG: file }), /"cron" is not a platform\.json key; did you mean "crons"\?/);
  });

  it('a port in use says to set PORT', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as { port: number }).port;
      expectRefused(await start({ PORT: String(port) }), new RegExp(`port ${port} is already in use.*set PORT`));
    } finally {
      taken.close();
    }
  });

  it('an unreachable PostgreSQL says to set DATABASE_URL, and never prints its password', async () => {
    const closed: Server = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve)); // a port nothing listens on
    const result = await start({ DATABASE_URL: `postgres://hookrun:pw-never-printed@127.0.0.1:${port}/app` });
    expectRefused(result, new RegExp(`Cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port}.*set DATABASE_URL`));
    expect(result.output).not.toContain('pw-never-printed');
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)('a database that does not exist says to create it or set DATABASE_URL', async () => {
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.pathname = '/hookrun_no_such_database';
    expectRefused(await start({ DATABASE_URL: url.toString() }), /has no database "hookrun_no_such_database": create it .* or set DATABASE_URL/);
  });

  it('a Stripe API key pasted as the signing secret is refused with the reason, the key never printed', async () => {
    const key = 'sk_live_51Hpasted0by0mistake0000000000';
    const result = await start({ PAYMENTS_WEBHOOK_SECRET: key });
    expectRefused(result, /PAYMENTS_WEBHOOK_SECRET is a Stripe API key \(sk_live_…\), not a webhook signing secret: a signing secret starts with whsec_/);
    expect(result.output).not.toContain(key);
  });
});

describe('the Stripe signing secret check', () => {
  it('refuses a restricted key anywhere in a rotation list, naming its place and not the key', async () => {
    const { stripeProvider } = await import('../../src/webhooks/providers/stripe.js');
    const create = (values: string[]) => () => stripeProvider.createVerifier({ envName: 'STRIPE_WEBHOOK_SECRET', values }, { publicUrl: undefined });
    expect(create(['whsec_current', 'rk_test_restricted123'])).toThrow(/^value 2 of STRIPE_WEBHOOK_SECRET is a Stripe API key \(rk_test_…\)/);
    expect(create(['whsec_current', 'rk_test_restricted123'])).not.toThrow(/restricted123/);
    expect(create(['whsec_current', 'local-secret'])).not.toThrow();
  });
});
