import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { makeLegacyDataDir } from '../helpers/legacy-layout.js';
import { SECRETS } from '../helpers/config.js';
import { acknowledged, sendDelivery, stripeDelivery, supabaseInsert } from '../helpers/signed-deliveries.js';
import { npm, packHookrun, startFromInstall, tarballInstalled } from '../helpers/packed-hookrun.js';
import { freePort } from '../helpers/free-port.js';
import { linkTree } from '../helpers/link-tree.js';
import { dockerEnv, dockerStages, targetInstructions } from '../helpers/dockerfile.js';
import { TEST_NODE_FLAGS, baseEnv, pollUntil, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';

const run = promisify(execFile);

/** The project's own files this test adds to what `hookrun init` wrote. */
const FILES: Record<string, string> = {
  'jobs/nightly-report.ts': `import { defineJob } from 'hookrun';
export default defineJob({ async run({ log }) { log.info('nightly report ran'); } });
`,
  'handlers/notify-sales.ts': `import { defineHandler } from 'hookrun';
export default defineHandler({
  on: ['stripe:customer.subscription.updated'],
  run(event, ctx) { ctx.log.info({ status: event.data.object.status }, 'sales told'); },
});
`,
  'handlers/sync-crm.ts': `import { defineHandler } from 'hookrun';
export default defineHandler({
  on: ['stripe:customer.subscription.updated'],
  concurrency: { limit: 1, key: (event) => String(event.data.object.customer) },
  run(event, ctx) {
    if (ctx.attempt <= 2) throw new Error('CRM is down (attempt ' + ctx.attempt + ')');
    ctx.log.info({ customer: event.data.object.customer }, 'crm synced');
  },
});
`,
  'handlers/new-profile.ts': `import { defineHandler, type DatabaseChange } from 'hookrun';
type Profile = { id: string; name: string };
export default defineHandler({
  on: ['database:INSERT:profiles'],
  run(event: DatabaseChange<Profile>, ctx) { ctx.log.info({ name: event.record?.name }, 'profile created'); },
});
`,
};

/** A field stripe-node's type for that event does not have: the user's `tsc --noEmit` must refuse it. */
const WRONG_FIELD = `import { defineHandler } from 'hookrun';
export default defineHandler({ on: ['stripe:invoice.paid'], run(event) { return void event.data.object.no_such_field; } });
`;

let work: string;
let project: string;
let packed: string[];
let tool: string;

/**
 * What a user gets: `npm pack` (which builds dist/ afresh through `prepack`),
 * the tarball installed into folders outside this repository, `hookrun init`
 * run from it, and the project installed on the same tarball.
 */
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'hookrun-installed-'));
  packed = (await packHookrun()).files;
  const installed = await tarballInstalled();
  const tarball = installed.tarball;
  tool = installed.installedIn;
  project = join(work, 'my-hookrun');
  await run(process.execPath, [join(tool, 'node_modules', 'hookrun', 'dist', 'main.js'), 'init', project], { timeout: 30_000 });
  // init run from the tool's install names the tarball that install came from, so the project's npm install resolves it.
  const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  expect(pkg.dependencies.hookrun).toMatch(/^file:/);
  expect(resolve(project, pkg.dependencies.hookrun!.slice('file:'.length))).toBe(tarball);
  for (const [path, text] of Object.entries(FILES)) writeFileSync(join(project, path), text);
  await startFromInstall(project);
  await npm(['install'], project);
}, 600_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

const subscriptionUpdated = (tag: string) =>
  stripeDelivery({
    id: `evt_${tag}`,
    object: 'event',
    type: 'customer.subscription.updated',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    data: {
      object: {
        id: `sub_${tag}`,
        object: 'subscription',
        customer: `cus_${tag}`,
        status: 'active',
        created: 1,
        cancel_at_period_end: false,
        items: { data: [] },
      },
    },
  });

async function admin<T>(server: HookrunProcess, path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(`${server.url}/api${path}`, { ...init, headers: { authorization: `Bearer ${SECRETS.admin}`, ...init.headers } });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as T;
}

type History = { event: { status: string }; history: Array<{ attempt: number; handler: string | null; outcome: string }> };

async function waitForStatus(server: HookrunProcess, id: number, status: string, timeoutMs: number): Promise<History> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const detail = await admin<History>(server, `/events/${id}`);
    if (detail.event.status === status || Date.now() > deadline) return detail;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('the published package', () => {
  it('holds the built code, its declarations and the migrations, and nothing of the repository tooling', () => {
    for (const needed of [
      'package.json',
      'README.md',
      'LICENSE',
      'docs/getting-started.md',
      'dist/main.js',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/cron/jobs/keep-alive.js',
      'drizzle/meta/_journal.json',
    ]) {
      expect(packed, needed).toContain(needed);
    }
    expect(packed.some((f) => /^drizzle\/0000_.*\.sql$/.test(f))).toBe(true);
    expect(packed.some((f) => /^drizzle\/legacy\/0000_.*\.sql$/.test(f))).toBe(true);
    const unwanted = packed.filter((f) => /^(test|bench|\.ci|src|examples|scripts|node_modules)\//.test(f) || f.endsWith('.map') || /(^|\/)\.env$/.test(f));
    expect(unwanted).toEqual([]);
    expect(packed).not.toContain('dist/cron/jobs/ghost-job.js');
  });

  it('installs into an empty folder: no install script for npm to warn about, its public entry imports, its bin answers --help', async () => {
    const installed = JSON.parse(readFileSync(join(tool, 'node_modules', 'hookrun', 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
    expect(['preinstall', 'install', 'postinstall', 'prepare'].filter((name) => installed.scripts?.[name] !== undefined)).toEqual([]);
    const api = await run(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('hookrun'); console.log(typeof m.defineJob, typeof m.defineHandler)"],
      { cwd: tool, timeout: 30_000 },
    );
    expect(api.stdout.trim()).toBe('function function');
    expect(readFileSync(join(tool, 'node_modules', 'hookrun', 'dist', 'index.d.ts'), 'utf8')).toContain('defineHandler');
    const help = await run('npx', ['hookrun', '--help'], { cwd: tool, timeout: 60_000 });
    expect(help.stdout).toMatch(/init/);
  }, 120_000);
});

describe('a project made by hookrun init, on the installed tarball', () => {
  it("type-checks its handlers against the providers' own types, and refuses a field the type lacks", async () => {
    // One check of the project with a wrong handler beside the ones init wrote: its error is the only one.
    writeFileSync(join(project, 'handlers', 'wrong-field.ts'), WRONG_FIELD);
    const failed = await run('npx', ['tsc', '--noEmit'], { cwd: project, timeout: 120_000 }).then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? 'failed',
    );
    rmSync(join(project, 'handlers', 'wrong-field.ts'));
    const errors = failed.split('\n').filter((line) => line.includes('error TS'));
    expect(errors.length, failed).toBeGreaterThan(0);
    expect(
      errors.filter((line) => !line.startsWith('handlers/wrong-field.ts(')),
      failed,
    ).toEqual([]);
    expect(failed).toMatch(/wrong-field\.ts.*Property 'no_such_field' does not exist/);
  }, 240_000);

  const databases: Array<[string, () => Promise<{ env: Record<string, string>; drop(): Promise<void> }>]> = [
    ['the embedded database', async () => ({ env: { DATA_DIR: mkdtempSync(join(work, 'data-')) }, drop: async () => undefined })],
  ];
  if (process.env.TEST_DATABASE_URL) {
    databases.push([
      'PostgreSQL',
      async () => {
        const name = `hookrun_installed_${process.pid}`;
        const adminClient = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
        await adminClient.connect();
        await adminClient.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await adminClient.query(`CREATE DATABASE ${name}`);
        await adminClient.end();
        const url = new URL(process.env.TEST_DATABASE_URL!);
        url.pathname = `/${name}`;
        return {
          env: { DATABASE_URL: url.toString() },
          async drop() {
            const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
            await c.connect();
            await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
            await c.end();
          },
        };
      },
    ]);
  }

  it.each(databases)(
    'serves its handlers and jobs on %s: each handler runs, the failing one is retried alone',
    async (_name, database) => {
      const { env, drop } = await database();
      const server = await spawnHookrun({ mainJs: join(project, 'node_modules', 'hookrun', 'dist', 'main.js'), cwd: project, env, readyTimeoutMs: 60_000 });
      try {
        const sent = await sendDelivery(server.url, subscriptionUpdated(`installed_${Date.now()}`));
        expect(acknowledged(sent), JSON.stringify(sent)).toBe(true);
        const id = (JSON.parse((sent as { body: string }).body) as { id: number }).id;
        const done = await waitForStatus(server, id, 'processed', 45_000);
        expect(done.event.status).toBe('processed');
        const runs = done.history.map((a) => `${a.attempt}:${a.handler}:${a.outcome}`).sort();
        // sync-crm has flow options: its delivery waits for its claim, and each of its attempts is its own.
        expect(runs).toEqual(['1:notify-sales:processed', '1:stripe-mirror:processed', '1:sync-crm:failed', '2:sync-crm:failed', '3:sync-crm:processed']);

        const change = await sendDelivery(server.url, supabaseInsert(`p_${Date.now()}`));
        const changeId = (JSON.parse((change as { body: string }).body) as { id: number }).id;
        const changed = await waitForStatus(server, changeId, 'processed', 15_000);
        expect(changed.history.map((a) => a.handler).sort()).toEqual(['database-changes', 'new-profile']);

        const cron = await fetch(`${server.url}/cron/nightly-report`, { method: 'POST', headers: { authorization: `Bearer ${SECRETS.cron}` } });
        expect(cron.status).toBe(200);
        // An answer can overtake the log lines written before it, on their way through the child's stdout pipe.
        const logged = (line: string) => server.output().includes(line) || undefined;
        await pollUntil("the job's and the handler's log lines", 10_000, () => (logged('nightly report ran') && logged('profile created')) || undefined);
      } finally {
        await server.stop();
        await drop();
      }
    },
    120_000,
  );

  it('serves the same project from a package without "type" (what `npm init -y` and create-next-app write): it type-checks, its handlers load, its job runs', async () => {
    const plain = join(work, 'without-type');
    cpSync(project, plain, { recursive: true, filter: (src) => ![join(project, 'node_modules'), join(project, '.data')].includes(src) });
    symlinkSync(join(project, 'node_modules'), join(plain, 'node_modules'), 'dir');
    const pkg = JSON.parse(readFileSync(join(plain, 'package.json'), 'utf8')) as { type?: string };
    expect(pkg.type, 'hookrun init writes "type": "module"; this copy goes without').toBe('module');
    delete pkg.type;
    writeFileSync(join(plain, 'package.json'), JSON.stringify(pkg, null, 2));
    await run('npx', ['tsc', '--noEmit'], { cwd: plain, timeout: 120_000 });
    const dataDir = mkdtempSync(join(work, 'data-'));
    const server = await spawnHookrun({
      mainJs: join(plain, 'node_modules', 'hookrun', 'dist', 'main.js'),
      cwd: plain,
      env: { DATA_DIR: dataDir },
      readyTimeoutMs: 60_000,
    });
    try {
      const { handlers } = await admin<{ handlers: Array<{ name: string; registered: boolean }> }>(server, '/handlers');
      const registered = handlers.filter((h) => h.registered).map((h) => h.name);
      expect(registered).toEqual(expect.arrayContaining(['notify-sales', 'sync-crm', 'new-profile']));
      const cron = await fetch(`${server.url}/cron/nightly-report`, { method: 'POST', headers: { authorization: `Bearer ${SECRETS.cron}` } });
      expect(cron.status).toBe(200);
      await pollUntil("the job's log line", 10_000, () => server.output().includes('nightly report ran') || undefined);
    } finally {
      await server.stop();
      for (const dir of [plain, dataDir]) rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);

  it('starts on a data dir the previous release made (tables in public) and finds every old event', async () => {
    const dataDir = mkdtempSync(join(work, 'legacy-'));
    await makeLegacyDataDir(dataDir);
    const server = await spawnHookrun({
      mainJs: join(project, 'node_modules', 'hookrun', 'dist', 'main.js'),
      cwd: project,
      env: { DATA_DIR: dataDir },
      readyTimeoutMs: 60_000,
    });
    try {
      const { events } = await admin<{ events: Array<{ key: string }> }>(server, '/events?limit=10');
      expect(events.map((e) => e.key).sort()).toEqual(['old_1', 'old_2', 'old_3']);
      expect(server.output()).toContain("moved hookrun's tables from public to schema hookrun");
    } finally {
      await server.stop();
    }
  }, 120_000);
});

describe('hookrun added to an app that already has its package.json (no "type", scripts of its own), from the installed tarball', () => {
  /** The app a team already has: `npm init -y`'s shape, scripts hookrun's names collide with, and a dependency of its own. */
  const APP_PACKAGE = {
    name: 'existing-app',
    version: '1.0.0',
    private: true,
    scripts: { dev: 'next dev', start: 'next start', lint: 'eslint .' },
    dependencies: { 'left-pad': '^1.3.0' },
  };
  /** A handler that throws from a named function, so its stack has a frame in this file. */
  const FAILING = `import { defineHandler } from 'hookrun';
function chargeCustomer(): never { throw new Error('the billing API said no'); }
export default defineHandler({ on: ['stripe:invoice.paid'], run() { chargeCustomer(); } });
`;

  let app: string;
  const hookrun = (args: string[], env: Record<string, string>) =>
    run(process.execPath, [...TEST_NODE_FLAGS, join(app, 'node_modules', 'hookrun', 'dist', 'main.js'), ...args], {
      cwd: app,
      env: { ...baseEnv(), ...env },
      timeout: 60_000,
    }).then(
      (done) => ({ code: 0, out: done.stdout + done.stderr }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? -1, out: `${error.stdout ?? ''}${error.stderr ?? ''}` }),
    );

  beforeAll(async () => {
    app = join(work, 'existing-app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), `${JSON.stringify(APP_PACKAGE, null, 2)}\n`);
    await run(process.execPath, [join(tool, 'node_modules', 'hookrun', 'dist', 'main.js'), 'init', '.'], { cwd: app, timeout: 30_000 });
    // The app's install would fetch what the project's already did: the same tarball and the same devDependencies.
    symlinkSync(join(project, 'node_modules'), join(app, 'node_modules'), 'dir');
  }, 60_000);

  it('keeps every script and dependency the app had, and adds its own beside them', () => {
    const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as typeof APP_PACKAGE & {
      type?: string;
      scripts: Record<string, string>;
      dependencies: Record<string, string>;
    };
    expect(pkg.type).toBeUndefined();
    expect(pkg.scripts).toMatchObject(APP_PACKAGE.scripts);
    expect(pkg.scripts['hookrun:start']).toBe('exec hookrun start');
    expect(pkg.dependencies['left-pad']).toBe('^1.3.0');
    expect(pkg.dependencies.hookrun).toMatch(/^file:.*\.tgz$/);
  });

  it('check passes, then fails as start would: a misspelled event name, a database that does not exist', async () => {
    const dataDir = join(work, 'existing-app-data');
    const good = await hookrun(['check'], { DATA_DIR: dataDir });
    expect(good.code, good.out).toBe(0);
    expect(existsSync(dataDir), 'check made no data dir').toBe(false);

    writeFileSync(
      join(app, 'handlers', 'typo.mts'),
      "import { defineHandler } from 'hookrun';\nexport default defineHandler({ on: ['clerk:user.craeted'], run() {} });\n",
    );
    try {
      const misspelled = await hookrun(['check'], { DATA_DIR: dataDir });
      expect(misspelled.code).toBe(78);
      expect(misspelled.out).toMatch(/typo\.mts/);
      expect(misspelled.out).toMatch(/clerk:user\.created/);
    } finally {
      rmSync(join(app, 'handlers', 'typo.mts'));
    }

    if (process.env.TEST_DATABASE_URL) {
      const url = new URL(process.env.TEST_DATABASE_URL);
      url.pathname = `/hookrun_no_such_database_${process.pid}`;
      const missing = await hookrun(['check'], { DATABASE_URL: url.toString() });
      expect(missing.code, missing.out).toBe(78);
      expect(missing.out).toMatch(/no database/i);
    }
  }, 180_000);

  it("its start script drains on SIGTERM sent to the process npm is, and a failing handler's log line carries its stack", async () => {
    writeFileSync(join(app, 'handlers', 'charge.mts'), FAILING);
    const port = await freePort();
    const env = { ...baseEnv(), PORT: String(port), DATA_DIR: join(work, 'existing-app-start'), npm_config_update_notifier: 'false' };
    const npmStart = spawn('npm', ['run', '--silent', 'hookrun:start'], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    npmStart.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    npmStart.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolveExit) => npmStart.once('exit', (code) => resolveExit(code)));
    const url = `http://127.0.0.1:${port}`;
    try {
      await pollUntil('hookrun:start ready', 60_000, async () => ((await fetch(`${url}/ready`).catch(() => undefined))?.status === 200 ? true : undefined));
      const sent = await sendDelivery(
        url,
        stripeDelivery({
          id: `evt_charge_${Date.now()}`,
          object: 'event',
          type: 'invoice.paid',
          created: Math.floor(Date.now() / 1000),
          livemode: false,
          data: { object: { id: 'in_1', object: 'invoice', customer: 'cus_1' } },
        }),
      );
      expect(acknowledged(sent), JSON.stringify(sent)).toBe(true);
      const failedLine = await pollUntil("the failed delivery's log line", 30_000, () =>
        output.split('\n').find((line) => line.includes('"handler":"charge"') && line.includes('the billing API said no')),
      );
      const { err } = JSON.parse(failedLine) as { err: { message: string; stack: string } };
      expect(err.stack).toMatch(/chargeCustomer .*charge\.mts:2/);

      npmStart.kill('SIGTERM');
      expect(await exited).toBe(0);
      // npm is gone: the server it started must be gone with it, having drained (nothing serves on its port).
      expect(
        await fetch(`${url}/health`).then(
          () => 'still serving',
          () => 'closed',
        ),
      ).toBe('closed');
      expect(output).toMatch(/stopped/);
    } finally {
      npmStart.kill('SIGKILL');
      rmSync(join(app, 'handlers', 'charge.mts'), { force: true });
    }
  }, 180_000);
});

describe('the container recipe hookrun init writes, followed outside a container (no container engine runs here)', () => {
  it("the Dockerfile's stages as written: production dependencies alone, the project beside them; its CMD serves, its HEALTHCHECK passes once ready and fails once stopped, SIGTERM exits 0", async () => {
    const dockerfile = readFileSync(join(project, 'Dockerfile'), 'utf8');
    // The default target (the last stage): the embedded database, with what it inherits from the runtime stage.
    expect(dockerStages(dockerfile).at(-1)!.name).toBe('embedded');
    const runtime = targetInstructions(dockerfile, 'embedded');
    expect(runtime).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^RUN npm ci --omit=dev/m);
    // The deps stage: package*.json and `npm ci --omit=dev`, nothing else of the project.
    const deps = mkdtempSync(join(work, 'image-deps-'));
    for (const file of ['package.json', 'package-lock.json']) cpSync(join(project, file), join(deps, file));
    await npm(['ci', '--omit=dev'], deps);
    // The runtime stage: COPY . . (less .dockerignore) beside the deps stage's node_modules.
    const app = mkdtempSync(join(work, 'image-app-'));
    const ignored = readFileSync(join(project, '.dockerignore'), 'utf8').split('\n').filter(Boolean);
    cpSync(project, app, { recursive: true, filter: (src) => !ignored.some((name) => src === join(project, name)) });
    await linkTree(join(deps, 'node_modules'), join(app, 'node_modules')); // COPY --from=deps: read-only from here on
    expect(existsSync(join(app, 'node_modules', 'typescript')), 'no dev dependency in the image').toBe(false);

    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(runtime)![1]!) as string[];
    expect(cmd[0], 'exec form: node is PID 1 and gets SIGTERM').toBe('node');
    const health = /^HEALTHCHECK .*? CMD node -e "(.*)"$/m.exec(runtime)![1]!;
    const env = { ...dockerEnv(runtime), HOST: '127.0.0.1', DATA_DIR: join(app, '.data') };
    const server = await spawnHookrun({ mainJs: join(app, cmd[1]!), cwd: app, args: cmd.slice(2), env, readyTimeoutMs: 60_000 });
    const healthcheck = () =>
      run(process.execPath, ['-e', health], { env: { PORT: new URL(server.url).port }, timeout: 10_000 }).then(
        () => 0,
        (error: { code?: number }) => error.code ?? 1,
      );
    try {
      expect(await healthcheck()).toBe(0);
      const sent = await sendDelivery(server.url, subscriptionUpdated(`image_${Date.now()}`));
      expect(acknowledged(sent), JSON.stringify(sent)).toBe(true);
    } finally {
      server.kill('SIGTERM');
      expect(await server.waitForExit(20_000)).toEqual({ code: 0, signal: null });
    }
    expect(await healthcheck()).toBe(1);
  }, 240_000);

  it('compose.yaml builds hookrun from the Dockerfile and starts it on the postgres service once that is healthy, with the same credentials', () => {
    const compose = parseYaml(readFileSync(join(project, 'compose.yaml'), 'utf8')) as {
      services: Record<string, Record<string, unknown>>;
      volumes: Record<string, unknown>;
    };
    interface Service {
      build?: { context: string; target: string };
      environment?: Record<string, string>;
      depends_on?: unknown;
      healthcheck?: unknown;
      ports?: string[];
    }
    const { hookrun, postgres } = compose.services as unknown as { hookrun: Service; postgres: Service };
    // With DATABASE_URL set, compose builds the PostgreSQL target (no PGlite, no volume), a stage the Dockerfile has.
    expect(hookrun.build).toEqual({ context: '.', target: 'postgres' });
    expect(dockerStages(readFileSync(join(project, 'Dockerfile'), 'utf8')).map((s) => s.name)).toContain('postgres');
    expect(hookrun.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(postgres.healthcheck).toMatchObject({ test: expect.arrayContaining(['pg_isready']) });
    const pgEnv = postgres.environment!;
    const url = new URL(hookrun.environment!.DATABASE_URL!);
    expect([url.hostname, url.username, url.password, url.pathname.slice(1)]).toEqual([
      'postgres',
      pgEnv.POSTGRES_USER,
      pgEnv.POSTGRES_PASSWORD,
      pgEnv.POSTGRES_DB,
    ]);
    expect(hookrun.ports).toEqual([`${dockerEnv(targetInstructions(readFileSync(join(project, 'Dockerfile'), 'utf8'), 'postgres')).PORT}:3002`]);
    expect(Object.keys(compose.volumes)).toEqual(['postgres-data']);
  });
});
