import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/client.js';
import { buildNextApp, startNext } from '../test/helpers/next-app.js';
import { packCheckout } from '../test/helpers/pack-once.js';
import type { Target } from './ingest.js';
import { backendCpu, createDatabase, settledTotal, type ServerProcess } from './servers.js';

/** A project with nothing of its own: the receivers and the shipped handlers, as `hookrun start` serves them in the bench. */
const PROJECT = {
  'jobs/noop.ts': `import { defineJob } from 'hookrun';\nexport default defineJob({ run() {} });\n`,
};

/** A route of the app's own that reads the body and answers: what Next.js costs per request before hookrun does anything. */
const HELLO_ROUTE = {
  'app/api/hello/route.ts': `export const dynamic = 'force-dynamic';\nexport async function POST(request: Request) {\n  await request.text();\n  return new Response('ok');\n}\n`,
};

/**
 * This checkout packed, installed into a Next.js app and mounted at
 * `app/api/[...hookrun]/route.ts` (`next build && next start`), on a
 * database of its own: receipt through Next.js's route handler, processing
 * after each answer with `after()`; beside it, the same app's own hello
 * route (Next.js's floor). `cleanup` stops and removes all of it.
 */
export async function nextIngestTargets(baseUrl: string, secret: string): Promise<{ targets: Target[]; cleanup(): Promise<void> }> {
  const work = mkdtempSync(join(tmpdir(), 'hookrun-bench-next-'));
  const database = await createDatabase(baseUrl, 'next');
  const undo: Array<() => Promise<void>> = [async () => rmSync(work, { recursive: true, force: true }), () => database.drop()];
  const cleanup = async () => {
    for (const step of undo) await step();
  };
  try {
    const { tarball } = await packCheckout(work);
    const app = join(work, 'app');
    await buildNextApp(app, tarball, PROJECT, HELLO_ROUTE);
    const cronSecret = 'bench-cron-secret-0123456789abcdef0123';
    const env = { DATABASE_URL: database.url, PAYMENTS_WEBHOOK_SECRET: secret, CRON_SECRET: cronSecret, LOG_LEVEL: 'warn' };
    const next = await startNext(app, env, '/api/health');
    undo.unshift(() => next.stop());
    const observer = await openDatabase({ databaseUrl: database.url });
    undo.unshift(() => observer.close());
    const server: ServerProcess = { name: 'next', url: next.url, child: next.child, tail: () => next.output().slice(-4000), stop: () => next.stop() };
    const hello: Target = { name: 'Next.js hello route', server, path: '/api/hello', distinct: false };
    const target: Target = {
      name: 'hookrun postgres, inside Next.js',
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
    return { targets: [hello, target], cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
