import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRETS } from '../helpers/config.js';
import { createEmptyPostgresDatabase } from '../helpers/db.js';
import { startNext, type NextServer, invoicePaid } from '../helpers/next-app.js';
import { nextAppBuilt } from '../helpers/packed-hookrun.js';
import { pollUntil } from '../helpers/poll.js';
import { acknowledged, clerkUserCreated, sendDelivery } from '../helpers/signed-deliveries.js';

describe.skipIf(!process.env.TEST_DATABASE_URL)(
  "hookrun mounted in a Next.js app (next build && next start, docs/deploy.md's next.config.mjs, from the packed tarball, on PostgreSQL)",
  { timeout: 180_000 },
  () => {
    let work: string;
    let app: string;
    let notes: string;
    let database: { url: string; drop(): Promise<void> };
    let server: NextServer | undefined;
    const env = () => ({
      DATABASE_URL: database.url,
      PAYMENTS_WEBHOOK_SECRET: SECRETS.payments,
      AUTH_WEBHOOK_SECRET: SECRETS.auth,
      CRON_SECRET: SECRETS.cron,
      NOTES_FILE: notes,
      LEASE_SECONDS: '2',
    });
    const noted = () => (existsSync(notes) ? readFileSync(notes, 'utf8') : '');
    const drain = (secret: string | null = SECRETS.cron) =>
      fetch(`${server!.url}/api/cron/hookrun-drain`, {
        headers: { 'user-agent': 'vercel-cron/1.0', ...(secret ? { authorization: `Bearer ${secret}` } : {}) },
      });
    /** Call the drain every 500 ms, as Vercel Cron would every minute, until `line` is noted. */
    const drainUntil = (line: string) =>
      pollUntil(
        `"${line}" after drains`,
        40_000,
        async () => {
          expect((await drain()).status).toBe(200);
          return noted().includes(line) ? true : undefined;
        },
        500,
      );

    beforeAll(async () => {
      work = mkdtempSync(join(tmpdir(), 'hookrun-next-'));
      notes = join(work, 'notes.txt');
      writeFileSync(notes, '');
      const [built, db] = await Promise.all([nextAppBuilt(), createEmptyPostgresDatabase()]);
      ({ app } = built);
      database = db;
      server = await startNext(app, env(), '/api/health');
    }, 600_000);

    afterAll(async () => {
      await server?.stop();
      await database?.drop();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    it('answers signed Stripe and Clerk events 2xx and runs the project handlers after answering, with no drain', async () => {
      const stripe = await sendDelivery(`${server!.url}/api`, invoicePaid('evt_next_ok'));
      const clerk = await sendDelivery(`${server!.url}/api`, clerkUserCreated('next1'));
      expect(acknowledged(stripe), JSON.stringify(stripe)).toBe(true);
      expect(acknowledged(clerk), JSON.stringify(clerk)).toBe(true);
      await pollUntil(
        'both handlers',
        20_000,
        () => (noted().includes('invoice evt_next_ok cus_evt_next_ok attempt 1') && noted().includes('user user_next1')) || undefined,
      );
      // Logged before the handlers ran, but through a pipe the notes file does not wait for.
      await pollUntil('the log line naming after()', 10_000, () => server!.output().includes('with Next.js after()') || undefined);
      const repeat = await sendDelivery(`${server!.url}/api`, invoicePaid('evt_next_ok'));
      expect('status' in repeat && JSON.parse(repeat.body)).toMatchObject({ duplicate: true });
    });

    it('the drain route wants CRON_SECRET, and retries an event whose handler failed', async () => {
      expect((await drain(null)).status).toBe(401);
      expect((await drain('wrong-secret-of-the-right-length-123456')).status).toBe(401);
      expect(acknowledged(await sendDelivery(`${server!.url}/api`, invoicePaid('evt_next_fail')))).toBe(true);
      await drainUntil('invoice evt_next_fail cus_evt_next_fail attempt 2');
      const report = (await (await drain()).json()) as Record<string, unknown>;
      expect(report).toMatchObject({ claimed: expect.any(Number), cronRunsStarted: 0, budgetExhausted: false });
    });

    it('a function killed mid-handler loses nothing: the next instance`s drain takes the event over once its lease ends', async () => {
      expect(acknowledged(await sendDelivery(`${server!.url}/api`, invoicePaid('evt_next_block')))).toBe(true);
      await pollUntil('the handler to start', 20_000, () => noted().includes('blocking evt_next_block') || undefined);
      await server!.kill();
      server = await startNext(app, env(), '/api/health');
      await drainUntil('invoice evt_next_block cus_evt_next_block attempt 2');
    });

    it('a Vercel Cron delivery sent twice runs the job once; a manual call runs it again', async () => {
      const tick = () => fetch(`${server!.url}/api/cron/nightly`, { headers: { 'user-agent': 'vercel-cron/1.0', authorization: `Bearer ${SECRETS.cron}` } });
      const first = await tick();
      const second = await tick();
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(second.headers.get('x-hookrun-run')).toBe('duplicate');
      expect(noted().match(/^nightly$/gm)).toHaveLength(1);
      const manual = await fetch(`${server!.url}/api/cron/nightly`, { method: 'POST', headers: { authorization: `Bearer ${SECRETS.cron}` } });
      expect(manual.status).toBe(200);
      expect(noted().match(/^nightly$/gm)).toHaveLength(2);
    });

    it('without DATABASE_URL every route answers 503 not_configured, saying why the embedded database cannot serve Next.js', async () => {
      const embedded = await startNext(app, { ...env(), DATABASE_URL: undefined, DATA_DIR: join(work, 'data') }, '/');
      try {
        const response = await fetch(`${embedded.url}/api/health`);
        expect(response.status).toBe(503);
        const body = (await response.json()) as { error: { code: string; message: string } };
        expect(body.error.code).toBe('not_configured');
        expect(body.error.message).toMatch(/needs PostgreSQL: set DATABASE_URL/);
        expect(existsSync(join(work, 'data'))).toBe(false);
      } finally {
        await embedded.stop();
      }
    });
  },
);
