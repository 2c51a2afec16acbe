import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRETS } from '../helpers/config.js';
import { createEmptyPostgresDatabase } from '../helpers/db.js';
import { startStandalone, type NextServer, invoicePaid } from '../helpers/next-app.js';
import { buildDeployedNextApp, nextAppBuilt } from '../helpers/packed-hookrun.js';
import { pollUntil } from '../helpers/poll.js';
import { acknowledged, sendDelivery } from '../helpers/signed-deliveries.js';

/**
 * The app for a package.json with `packageType`: without "type" it is the
 * run's one build (`nextAppBuilt`, also served by next-app.test.ts); with
 * "type": "module" it is built here, beside `work`.
 */
async function builtApp(packageType: 'module' | undefined, work: string): Promise<string> {
  if (!packageType) return (await nextAppBuilt()).app;
  const app = join(work, 'the-product');
  await buildDeployedNextApp(app, packageType);
  return app;
}

/*
 * `next start` runs from the app folder, where every file is at hand; a
 * deployment runs only what file tracing copied. `output: 'standalone'` is
 * that traced bundle (the same tracing Vercel deploys from), so the app is
 * built with docs/deploy.md's next.config.mjs as written there and served by
 * `.next/standalone/server.js` copied out of the app folder, on a database
 * nothing has migrated yet.
 */
describe.skipIf(!process.env.TEST_DATABASE_URL).each([
  { packageType: undefined, as: 'no "type" (as create-next-app writes it)' },
  { packageType: 'module' as const, as: '"type": "module"' },
])(
  "hookrun in a Next.js app's standalone build (docs/deploy.md's next.config.mjs, from the packed tarball, on a fresh PostgreSQL database), package.json with $as",
  { timeout: 180_000 },
  ({ packageType }) => {
    let work: string;
    let notes: string;
    let database: { url: string; drop(): Promise<void> };
    let server: NextServer | undefined;
    const noted = () => (existsSync(notes) ? readFileSync(notes, 'utf8') : '');
    const cron = (path: string) =>
      fetch(`${server!.url}/api/cron/${path}`, { headers: { 'user-agent': 'vercel-cron/1.0', authorization: `Bearer ${SECRETS.cron}` } });

    beforeAll(async () => {
      work = mkdtempSync(join(tmpdir(), 'hookrun-next-standalone-'));
      notes = join(work, 'notes.txt');
      writeFileSync(notes, '');
      const [app, db] = await Promise.all([builtApp(packageType, work), createEmptyPostgresDatabase()]);
      database = db;
      server = await startStandalone(
        app,
        {
          DATABASE_URL: database.url,
          PAYMENTS_WEBHOOK_SECRET: SECRETS.payments,
          CRON_SECRET: SECRETS.cron,
          NOTES_FILE: notes,
          LEASE_SECONDS: '2',
        },
        '/',
      );
    }, 600_000);

    afterAll(async () => {
      await server?.stop();
      await database?.drop();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    it('migrates the fresh database and processes a signed Stripe event after answering it', async () => {
      const health = await fetch(`${server!.url}/api/health`);
      expect(health.status, `${await health.text()}\n${server!.output()}`).toBe(200);
      const delivered = await sendDelivery(`${server!.url}/api`, invoicePaid('evt_standalone_ok'));
      expect(acknowledged(delivered), JSON.stringify(delivered)).toBe(true);
      await pollUntil('the handler', 20_000, () => noted().includes('invoice evt_standalone_ok cus_evt_standalone_ok attempt 1') || undefined);
    });

    it("runs the project's job on a Vercel Cron delivery", async () => {
      const tick = await cron('nightly');
      expect(tick.status, await tick.text()).toBe(200);
      expect(noted().match(/^nightly$/gm)).toHaveLength(1);
    });

    it('the drain retries an event whose handler failed', async () => {
      expect(acknowledged(await sendDelivery(`${server!.url}/api`, invoicePaid('evt_standalone_fail')))).toBe(true);
      await pollUntil(
        'the retry after drains',
        40_000,
        async () => {
          expect((await cron('hookrun-drain')).status).toBe(200);
          return noted().includes('invoice evt_standalone_fail cus_evt_standalone_fail attempt 2') || undefined;
        },
        500,
      );
    });
  },
);
