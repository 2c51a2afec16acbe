/*
 * How the suite runs: which files get modules of their own (the config's `isolated` project), which start first (the sequencer), how many forks, and with which Node flags.
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

/**
 * Node's flags for the forks and for every hookrun a test spawns: V8's
 * baseline WebAssembly compiler only. Each PGlite a test opens (a spawned
 * embedded hookrun, a data dir the CLI opens in-process, the embedded
 * thread) compiles PGlite's WebAssembly, and the optimising compiler's
 * background work on it never paid off in a test: it was half of a spawned
 * embedded start's CPU (about 0.8 of 1.7 CPU-s), and the whole run took
 * 618 CPU-s with it in the forks too, against 680. What the server
 * does is the same; only how fast its queries run changes.
 */
export const TEST_NODE_FLAGS = ['--liftoff-only'];

/**
 * The forks' flags: TEST_NODE_FLAGS, and a young generation of 64 MB a
 * half-space (V8's default is 16). A fork runs file after file for the whole
 * run and allocates much that lives a little while (PGlite's results, Hono's
 * requests, module graphs); with more room fewer scavenges run and less is
 * promoted to the old generation: the 161 files that run in-process took
 * 207-224 machine CPU-s against 233-238. Spawned hookruns keep Node's
 * default, so what the memory tests read of them is what users run.
 */
export const FORK_NODE_FLAGS = [...TEST_NODE_FLAGS, '--max-semi-space-size=64'];
