import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SECRETS } from '../helpers/config.js';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { useProjectDirs } from '../helpers/project-dir.js';
import { REPO_ROOT, pollUntil, seedDataDir, spawnHookrun } from '../helpers/spawn-hookrun.js';

/** A project's files, each kind of file hookrun loads, all importing the installed (ES module) hookrun. */
const PROJECT: Record<string, string> = {
  'jobs/hello.ts': `import { defineJob } from 'hookrun';
import { greeting } from '../lib/greeting.ts';
const from: string = 'a .ts job';
export default defineJob({ async run({ log }) { log.info(greeting(from)); } });
`,
  'jobs/from-mts.mts': `import { defineJob } from 'hookrun';
export default defineJob({ async run({ log }) { log.info('hello from a .mts job'); } });
`,
  'jobs/from-js.js': `import { defineJob } from 'hookrun';
export default defineJob({ async run({ log }) { log.info('hello from a .js job'); } });
`,
  'jobs/from-cjs.cjs': `const { defineJob } = require('hookrun');
module.exports = defineJob({ async run({ log }) { log.info('hello from a .cjs job'); } });
`,
  'lib/greeting.ts': `export const greeting = (from: string): string => 'hello from ' + from;
`,
  'handlers/notify-sales.ts': `import { defineHandler } from 'hookrun';
import { greeting } from '../lib/greeting.ts';
export default defineHandler({
  on: ['stripe:customer.subscription.updated'],
  run(event, ctx) { ctx.log.info(greeting(event.data.object.id)); },
});
`,
};

const JOBS = ['hello', 'from-mts', 'from-js', 'from-cjs'];

/** What create-next-app writes beside the hookrun project: no "type", its own tsconfig (jsx, bundler resolution, a path alias). */
const NEXT_APP: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'the-product', version: '0.1.0', private: true, scripts: { dev: 'next dev', build: 'next build' } }),
  'tsconfig.json': JSON.stringify({
    compilerOptions: {
      target: 'ES2017',
      lib: ['dom', 'dom.iterable', 'esnext'],
      strict: true,
      module: 'esnext',
      moduleResolution: 'bundler',
      isolatedModules: true,
      jsx: 'preserve',
      paths: { '@/*': ['./*'] },
    },
  }),
  'next.config.mjs': 'export default { serverExternalPackages: ["hookrun"] };\n',
  'app/page.tsx': 'export default function Home() {\n  return <p>the product</p>;\n}\n',
};

const within = (folder: string, files: Record<string, string>) => Object.fromEntries(Object.entries(files).map(([path, text]) => [join(folder, path), text]));

/** Each package a project may sit in: its files, and the project folder within it. */
const LAYOUTS: Array<[string, Record<string, string>, string]> = [
  ['a package with "type": "module"', { 'package.json': JSON.stringify({ name: 'app', type: 'module', dependencies: { hookrun: '*' } }), ...PROJECT }, '.'],
  [
    'a package without "type" (npm init -y)',
    {
      'package.json': JSON.stringify({
        name: 'app',
        version: '1.0.0',
        main: 'index.js',
        scripts: { test: 'exit 1' },
        license: 'ISC',
        dependencies: { hookrun: '*' },
      }),
      ...PROJECT,
    },
    '.',
  ],
  ['a Next.js app without "type", the project in hookrun/ beside app/', { ...NEXT_APP, ...within('hookrun', PROJECT) }, 'hookrun'],
];

describe('project files load whatever the type of the package around them', { timeout: 120_000 }, () => {
  const makeDir = useProjectDirs('hookrun-package-type-');
  beforeAll(() => ensureDistBuilt(), 180_000);

  it.each(LAYOUTS)('%s: .ts, .mts, .js and .cjs jobs and a .ts handler (with a .ts helper) load and run', async (_layout, files, projectDir) => {
    const root = makeDir(files);
    // What `npm install hookrun` gives the package, without the registry: this checkout, built.
    mkdirSync(join(root, 'node_modules'));
    symlinkSync(REPO_ROOT, join(root, 'node_modules', 'hookrun'), 'dir');
    const dataDir = join(root, '.data');
    await seedDataDir(dataDir);

    const server = await spawnHookrun({ cwd: root, args: ['start', '--project', projectDir], dataDir });
    try {
      const admin = { headers: { authorization: `Bearer ${SECRETS.admin}` } };
      const { handlers } = (await (await fetch(`${server.url}/api/handlers`, admin)).json()) as { handlers: Array<{ name: string; registered: boolean }> };
      expect(handlers.find((h) => h.name === 'notify-sales')).toMatchObject({ registered: true });
      for (const job of JOBS) {
        const ran = await fetch(`${server.url}/cron/${job}`, { method: 'POST', headers: { authorization: `Bearer ${SECRETS.cron}` } });
        expect(ran.status, `${job}: ${await ran.text()}`).toBe(200);
      }
      const lines = ['a .ts job', 'a .mts job', 'a .js job', 'a .cjs job'].map((from) => `hello from ${from}`);
      // An answer can overtake the log lines written before it, on their way through the child's stdout pipe.
      await pollUntil("the jobs' log lines", 10_000, () => (lines.every((line) => server.output().includes(line)) ? true : undefined));
    } finally {
      await server.stop();
    }
  });
});
