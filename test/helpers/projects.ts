/*
 * Which files get modules of their own (the config's `isolated` project), and which start first (the sequencer).
 * docs/architecture.md says how to choose.
 */

/** Test files that mock a module with `vi.mock`: in a fork that has loaded that module already, the mock would not reach it. */
export const ISOLATED = ['test/flow/handler-cli.test.ts', 'test/db/pglite-thread-death.test.ts'];

/** Test files that install the packed tarball (npm install, tsc, next build), packed once per run (helpers/packed-hookrun.ts); longest first, the order they start in. */
export const PACKAGE = [
  'test/reliability/installed-project.test.ts',
  'test/reliability/next-standalone.test.ts',
  'test/reliability/next-app.test.ts',
  'test/reliability/postgres-image.test.ts',
];

/** How many forks run test files at once (vitest.config.ts); the sequencer fills them at the start of a run. */
export const FORKS = 4;
