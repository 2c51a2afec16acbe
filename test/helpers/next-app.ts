import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';
import { linkTree } from './link-tree.js';
import { npm } from './npm.js';
import { pollUntil } from './poll.js';
import { stripeDelivery, type Delivery } from './signed-deliveries.js';

const run = promisify(execFile);

/** The Next.js the tests build against (Node 20.9+), with the React it needs; pinned so a new release cannot change a run. */
export const NEXT_PACKAGES = ['next@16.4.6', 'react@19.3.1', 'react-dom@19.3.1', 'typescript@5.9.3', '@types/react@19.3.0', '@types/node@20.19.43'];

/** The route file a user writes: the whole of hookrun under /api. */
export const ROUTE_FILE = `import { createNextRoute } from 'hookrun/next';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';
export const maxDuration = 60;
export const { GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS } = createNextRoute({ project: 'hookrun', maxDuration });
`;

/**
 * The Next.js config docs/deploy.md shows, read from between its
 * `<!-- tested: next.config.mjs -->` and `<!-- /tested -->` markers: the
 * docs' snippet is the file the tests build with.
 */
export function deployDocsNextConfig(): string {
  const docs = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'deploy.md'), 'utf8');
  const found = /<!-- tested: next\.config\.mjs -->\s*```js\n([\s\S]*?)```\s*<!-- \/tested -->/.exec(docs);
  if (!found) throw new Error('docs/deploy.md has no ```js block between <!-- tested: next.config.mjs --> and <!-- /tested -->');
  return found[1]!;
}

/**
 * The hookrun project the Next.js apps are built with: its handlers and job
 * note what they do in NOTES_FILE (read at run time, so one build serves
 * several tests). An event whose id says `fail` fails its first attempt; one
 * that says `block` hangs in its first attempt (a test kills the function
 * there).
 */
export const NEXT_PROJECT: Record<string, string> = {
  'handlers/note-invoice.ts': `import { appendFileSync } from 'node:fs';
import { defineHandler } from 'hookrun';
export default defineHandler({
  on: ['stripe:invoice.paid'],
  async run(event, ctx) {
    const note = (line: string) => appendFileSync(process.env.NOTES_FILE!, line + '\\n');
    if (ctx.attempt === 1 && event.id.includes('fail')) throw new Error('the CRM is down');
    if (ctx.attempt === 1 && event.id.includes('block')) {
      note('blocking ' + event.id);
      await new Promise(() => undefined);
    }
    note('invoice ' + event.id + ' ' + event.data.object.customer + ' attempt ' + ctx.attempt);
  },
});
`,
  'handlers/note-user.ts': `import { appendFileSync } from 'node:fs';
import { defineHandler } from 'hookrun';
export default defineHandler({
  on: ['clerk:user.created'],
  run(event) { appendFileSync(process.env.NOTES_FILE!, 'user ' + event.data.id + '\\n'); },
});
`,
  'jobs/nightly.ts': `import { appendFileSync } from 'node:fs';
import { defineJob } from 'hookrun';
export default defineJob({ run() { appendFileSync(process.env.NOTES_FILE!, 'nightly\\n'); } });
`,
  'platform.json': JSON.stringify({ crons: [{ path: '/cron/nightly', schedule: '0 3 * * *' }] }),
};

/** The app's own files besides hookrun: a page, so it is a product's app and not only an API. */
const APP_FILES: Record<string, string> = {
  'next.config.mjs': `/** hookrun loads the project's jobs and handlers at run time: Next.js must not bundle it. */\nexport default { serverExternalPackages: ['hookrun'] };\n`,
  'app/layout.tsx': `export default function RootLayout({ children }: { children: React.ReactNode }) {\n  return (<html lang="en"><body>{children}</body></html>);\n}\n`,
  'app/page.tsx': `export default function Home() {\n  return <p>the product</p>;\n}\n`,
  'app/api/[...hookrun]/route.ts': ROUTE_FILE,
};

/** `npm install` of the tarball and NEXT_PACKAGES into `dir`, whose package.json is written. */
export async function installNextPackages(dir: string, tarball: string): Promise<void> {
  await npm(['install', tarball, ...NEXT_PACKAGES], dir);
}

/**
 * A copy of what `installNextPackages` made in `from`: its node_modules (links
 * kept) and lock, and its dependencies in `dir`'s package.json (hookrun's by
 * the tarball's absolute path, as the copy sits elsewhere). Linked
 * (`linkTree`): a build writes new files beside them and changes none.
 */
async function copyInstall(from: string, dir: string, tarball: string): Promise<void> {
  await linkTree(join(from, 'node_modules'), join(dir, 'node_modules'));
  cpSync(join(from, 'package-lock.json'), join(dir, 'package-lock.json'));
  const { dependencies } = JSON.parse(readFileSync(join(from, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ ...manifest, dependencies: { ...dependencies, hookrun: `file:${tarball}` } }, null, 2));
}

/**
 * A Next.js app that mounts hookrun from the packed tarball: installed,
 * then `next build` (its type check covers the route file against
 * hookrun/next's types). `project` holds the hookrun project's files,
 * written under `hookrun/`; `appFiles` more files of the app itself;
 * `packageType` the app package.json's "type"; `installedIn` a folder where
 * `installNextPackages` ran with the same tarball, copied instead of
 * installing again (a test run installs once for all its apps:
 * helpers/packed-hookrun.ts).
 */
export async function buildNextApp(
  dir: string,
  tarball: string,
  project: Record<string, string>,
  appFiles: Record<string, string> = {},
  packageType?: 'module',
  installedIn?: string,
): Promise<void> {
  const files = { ...APP_FILES, ...appFiles, ...Object.fromEntries(Object.entries(project).map(([path, text]) => [`hookrun/${path}`, text])) };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  writeFileSync(join(dir, 'package.json'), nextAppManifest(packageType));
  if (installedIn) await copyInstall(installedIn, dir, tarball);
  else await installNextPackages(dir, tarball);
  await run(process.execPath, [join(dir, 'node_modules', 'next', 'dist', 'bin', 'next'), 'build'], {
    cwd: dir,
    timeout: 300_000,
    maxBuffer: 16 * 1024 * 1024,
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
  }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(`next build failed: ${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
  });
}

/** The app's package.json before its install: as create-next-app writes it, no "type" (so the project's .ts files sit in a CommonJS package), unless `packageType` says otherwise. */
export function nextAppManifest(packageType?: 'module'): string {
  return JSON.stringify({ name: 'the-product', private: true, ...(packageType ? { type: packageType } : {}) }, null, 2);
}

/** A running `next start`: its URL, what it printed, and ways to end it. */
export interface NextServer {
  url: string;
  /** The `next start` process (one process serves every request: the bench reads its CPU). */
  child: ChildProcess;
  output(): string;
  /** SIGKILL the whole process group: a function cut short mid-handler. */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL after 5 s. */
  stop(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

/** A server process started by `command` on `port`; resolves once `readyPath` answers (any status but a refused connection). */
async function serve(dir: string, command: string[], port: number, env: Record<string, string | undefined>, readyPath: string): Promise<NextServer> {
  const child = spawn(process.execPath, command, {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NEXT_TELEMETRY_DISABLED: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const url = `http://127.0.0.1:${port}`;
  const signal = async (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // already gone
    }
  };
  const server: NextServer = {
    url,
    child,
    output: () => text,
    async kill() {
      await signal('SIGKILL');
      await exited(child);
    },
    async stop() {
      await signal('SIGTERM');
      const timer = setTimeout(() => void signal('SIGKILL'), 5000);
      await exited(child);
      clearTimeout(timer);
    },
  };
  try {
    await pollUntil(
      `${command.join(' ')} on port ${port}`,
      60_000,
      async () => {
        if (child.exitCode !== null) throw new Error(`${command.join(' ')} exited (${child.exitCode}):\n${text}`);
        return fetch(url + readyPath).then(
          () => true,
          () => undefined,
        );
      },
      200,
    );
  } catch (error) {
    await server.kill();
    throw error;
  }
  return server;
}

/** `next start` on a free port with `env`; resolves once `readyPath` answers (any status but a refused connection). */
export async function startNext(dir: string, env: Record<string, string | undefined>, readyPath = '/'): Promise<NextServer> {
  const port = await freePort();
  return serve(dir, [join(dir, 'node_modules', 'next', 'dist', 'bin', 'next'), 'start', '-p', String(port), '-H', '127.0.0.1'], port, env, readyPath);
}

/**
 * The traced bundle of a build with `output: 'standalone'`, which holds only
 * the files Next.js's file tracing found (what Vercel deploys too), copied
 * out of the app to `<dir>.deployed` so no module resolves from the app's own
 * node_modules; the static assets copied in as the Next.js docs say; then
 * `node server.js` there with PORT and HOSTNAME.
 */
export async function startStandalone(dir: string, env: Record<string, string | undefined>, readyPath = '/'): Promise<NextServer> {
  const deployed = `${dir}.deployed`;
  if (!existsSync(deployed)) {
    await linkTree(join(dir, '.next', 'standalone'), deployed);
    await linkTree(join(dir, '.next', 'static'), join(deployed, '.next', 'static'));
    if (existsSync(join(dir, 'public'))) await linkTree(join(dir, 'public'), join(deployed, 'public'));
  }
  const port = await freePort();
  return serve(deployed, [join(deployed, 'server.js')], port, { ...env, PORT: String(port), HOSTNAME: '127.0.0.1' }, readyPath);
}

/** A signed Stripe invoice.paid for the apps' note-invoice handler: `id` names the event, and `fail` or `block` in it steers the handler. */
export function invoicePaid(id: string): Delivery {
  return stripeDelivery({
    id,
    object: 'event',
    type: 'invoice.paid',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    data: { object: { id: `in_${id}`, object: 'invoice', customer: `cus_${id}`, status: 'paid' } },
  });
}
