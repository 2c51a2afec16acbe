import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/helpers/sequencer.js';

/** Test files that run browsers (Chromium through playwright-core): one at a time, each drives a whole browser. */
const BROWSER = ['test/console/*-browser.test.ts', 'test/tools/dashboard-browser.test.ts'];

/** Test files that install the packed tarball (npm install, tsc, next build): the package project packs it once per run. */
const PACKAGE = [
  'test/reliability/installed-project.test.ts',
  'test/reliability/next-app.test.ts',
  'test/reliability/next-standalone.test.ts',
  'test/reliability/postgres-image.test.ts',
];

/**
 * Test files that start processes (hookrun itself, PgBouncer, strace, a PID namespace), kill them, cut their
 * database off, or flood them: each gets a fork of its own, two at a time beside the in-process tests.
 */
const PROCESS = [
  'test/reliability/**/*.test.ts',
  'test/alerts/alert-cli.test.ts',
  'test/core/data-dir-lock.test.ts',
  'test/cron/platform-entries-cli.test.ts',
  'test/db/data-dir-lock-namespaces.test.ts',
  'test/db/data-dir-lock-race.test.ts',
  'test/db/embedded-fsync.test.ts',
  'test/db/pglite-thread.test.ts',
  'test/payments/reconcile-cli.test.ts',
  'test/project/package-type-cli.test.ts',
  'test/reconcile/reconcile-cli.test.ts',
  'test/retention/prune-cli.test.ts',
  'test/service/no-worker.test.ts',
  'test/service/npm-start.test.ts',
  'test/telemetry/lazy-sdk.test.ts',
  'test/tools/cli-stale-database.test.ts',
  'test/tools/cli.test.ts',
  'test/tools/deploy-examples.test.ts',
  'test/tools/dev-cron-access.test.ts',
  'test/tools/dev-reload.test.ts',
  'test/tools/readme-examples.test.ts',
  'test/tools/recipes.test.ts',
  'test/webhooks/add-provider.test.ts',
];

/**
 * Four projects, run side by side (docs/architecture.md says which one a new test belongs to): `unit` (in-process:
 * the app, PGlite and PostgreSQL, the CLI through src/cli/run.ts), `process`, `browser` and `package`.
 */
export default defineConfig({
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    // Every project shares one pool of forks (vitest's default is one fewer than the cores: 1 on 2 cores). Three keep
    // 2 cores busy while spawned processes start; six starved the reliability tests' servers and ran no faster.
    poolOptions: { forks: { maxForks: 3, minForks: 1 } },
    sequence: { sequencer: LongestFirstSequencer },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 20_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: [...BROWSER, ...PACKAGE, ...PROCESS] } },
      { extends: true, test: { name: 'process', include: PROCESS, exclude: PACKAGE } },
      { extends: true, test: { name: 'browser', include: BROWSER } },
      { extends: true, test: { name: 'package', include: PACKAGE, globalSetup: ['test/helpers/global-setup.ts', 'test/helpers/pack-once.ts'] } },
    ],
  },
});
