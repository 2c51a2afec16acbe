/*
 * Which project a test file belongs to (docs/architecture.md says how to choose): the lists the config and the
 * sequencer both read.
 */

/** Test files that run browsers (Chromium through playwright-core): each drives a whole browser. */
export const BROWSER = ['test/console/*-browser.test.ts', 'test/tools/dashboard-browser.test.ts'];

/** Test files that install the packed tarball (npm install, tsc, next build), packed once per run (helpers/packed-hookrun.ts). */
export const PACKAGE = [
  'test/reliability/installed-project.test.ts',
  'test/reliability/next-app.test.ts',
  'test/reliability/next-standalone.test.ts',
  'test/reliability/postgres-image.test.ts',
];

/**
 * Test files that start processes (hookrun itself, PgBouncer, strace, a PID namespace), kill them, cut their
 * database off, or flood them.
 */
export const PROCESS = [
  'test/reliability/**/*.test.ts',
  'test/alerts/alert-cli.test.ts',
  'test/core/data-dir-lock.test.ts',
  'test/cron/platform-entries-cli.test.ts',
  'test/db/data-dir-lock-namespaces.test.ts',
  'test/db/data-dir-lock-race.test.ts',
  'test/db/embedded-fsync.test.ts',
  'test/db/pglite-thread.test.ts',
  // vi.mock: a module the unit project's forks have loaded already would stay unmocked
  'test/flow/handler-cli.test.ts',
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
