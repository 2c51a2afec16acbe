import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/client.js';
import { buildNextApp, startNext } from '../test/helpers/next-app.js';
import { madeInRun, packCheckout } from '../test/helpers/pack-once.js';
import { makeSignedEvents } from './events.js';
import type { Target } from './ingest.js';
import { backendCpu, createDatabase, settledTotal, type ServerProcess } from './servers.js';

/** A project with nothing of its own: the receivers and the shipped handlers, as `hookrun start` serves them in the bench. */
const PROJECT = {
  'jobs/noop.ts': `import { defineJob } from 'hookrun';\nexport default defineJob({ run() {} });\n`,
};

/**
 * The app's own routes beside hookrun: one that reads the body and answers
 * (what Next.js costs per request before hookrun does anything), and one that
 * only verifies the Stripe signature with stripe-node, as a hand-written
 * receiver that stores nothing does (what the mounted receiver is held to).
 */
const APP_ROUTES = {
  'app/api/hello/route.ts': `export const dynamic = 'force-dynamic';\nexport async function POST(request: Request) {\n  await request.text();\n  return new Response('ok');\n}\n`,
  'app/api/verify/route.ts': `import Stripe from 'stripe';

export const dynamic = 'force-dynamic';
const stripe = new Stripe('sk_test_bench_unused');

export async function POST(request: Request) {
  const body = await request.text();
  try {
    stripe.webhooks.constructEvent(body, request.headers.get('stripe-signature') ?? '', process.env.PAYMENTS_WEBHOOK_SECRET!);
  } catch {
    return Response.json({ error: 'invalid_signature' }, { status: 400 });
  }
  return Response.json({ received: true });
}
`,
};

/** The first request each route answered in a fresh `next start`, ms from sending to the whole answer: what a cold start adds. */
export interface NextFirstRequest {
  hookrunMs: number;
  verifyMs: number;
}

/** The names the report pairs: the mounted receiver and the app's verify-only route. */
export const NEXT_VERIFY_TARGET = 'Next.js verify-only route';
export const NEXT_HOOKRUN_TARGET = 'hookrun postgres, inside Next.js';

/** One signed event POSTed to `url`, timed to the end of the answer (which must be 2xx). */
async function timedPost(url: string, secret: string): Promise<number> {
  const [event] = makeSignedEvents(1, secret);
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': event!.signature },
    body: event!.body,
  });
  await response.text();
  if (!response.ok) throw new Error(`first request to ${url} answered ${response.status}`);
  return performance.now() - started;
}

/** The tarball and the Next.js install a test run made in its pack folder (`HOOKRUN_PACK_DIR`), when it made both. */
function testRunInstall(dir: string): { tarball: string; installedIn: string } | undefined {
  const packed = madeInRun<{ tarball: string }>(dir, 'packed');
  const installed = madeInRun<{ installedIn: string }>(dir, 'next-install');
  return packed && installed ? { tarball: packed.tarball, installedIn: installed.installedIn } : undefined;
}

/**
 * This checkout packed, installed into a Next.js app and mounted at
 * `app/api/[...hookrun]/route.ts` (`next build && next start`), on a
 * database of its own: receipt through Next.js's route handler, processing
 * after each answer with `after()`; beside it, the same app's own hello and
 * verify-only routes, and the first request each answered in the fresh
 * instance. `cleanup` stops and removes all of it. `packedIn`: a test run's
 * pack folder (`--packed`), whose tarball and install are copied instead.
 */
export async function nextIngestTargets(
  baseUrl: string,
  secret: string,
  progress: (line: string) => void,
  packedIn?: string,
): Promise<{ targets: Target[]; firstRequest: NextFirstRequest; cleanup(): Promise<void> }> {
  const work = mkdtempSync(join(tmpdir(), 'hookrun-bench-next-'));
  const database = await createDatabase(baseUrl, 'next');
  const undo: Array<() => Promise<void>> = [async () => rmSync(work, { recursive: true, force: true }), () => database.drop()];
  const cleanup = async () => {
    for (const step of undo) await step();
  };
  try {
    const fromRun = packedIn ? testRunInstall(packedIn) : undefined;
    if (packedIn && !fromRun) progress(`next: ${packedIn} holds no Next.js install of a test run; packing and installing here`);
    const { tarball } = fromRun ?? (await packCheckout(work));
    const app = join(work, 'app');
    await buildNextApp(app, tarball, PROJECT, APP_ROUTES, undefined, fromRun?.installedIn);
    const cronSecret = 'bench-cron-secret-0123456789abcdef0123';
    const env = { DATABASE_URL: database.url, PAYMENTS_WEBHOOK_SECRET: secret, CRON_SECRET: cronSecret, LOG_LEVEL: 'warn' };
    // Ready when the app's page answers, so neither route module has loaded before its first request is timed.
    const next = await startNext(app, env, '/');
    undo.unshift(() => next.stop());
    const firstRequest = {
      hookrunMs: await timedPost(`${next.url}/api/webhooks/payments`, secret),
      verifyMs: await timedPost(`${next.url}/api/verify`, secret),
    };
    const observer = await openDatabase({ databaseUrl: database.url });
    undo.unshift(() => observer.close());
    const server: ServerProcess = { name: 'next', url: next.url, child: next.child, tail: () => next.output().slice(-4000), stop: () => next.stop() };
    const hello: Target = { name: 'Next.js hello route', server, path: '/api/hello', distinct: false };
    const verify: Target = { name: NEXT_VERIFY_TARGET, server, path: '/api/verify', distinct: true };
    const target: Target = {
      name: NEXT_HOOKRUN_TARGET,
      server,
      path: '/api/webhooks/payments',
      distinct: true,
      databaseCpu: () => backendCpu(observer),
      // What a pass's budget left is the drain route's, which Vercel Cron calls every minute: here at every probe after a round.
      processedTotal: async () => {
        await fetch(`${next.url}/api/cron/hookrun-drain`, { headers: { authorization: `Bearer ${cronSecret}` } });
        return settledTotal(observer);
      },
    };
    return { targets: [hello, verify, target], firstRequest, cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
