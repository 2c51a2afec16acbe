import { defineConfig } from 'vitest/config';
import { FORKS, FORK_NODE_FLAGS, ISOLATED } from './test/helpers/projects.js';
import LongestFirstSequencer from './test/helpers/sequencer.js';

/**
 * One pool of four forks that live for the whole run, and two projects run one after the other:
 * - `isolated`: the few files that mock a module (test/helpers/projects.ts), each with its own module graph;
 * - `suite`: every other file. A fork keeps its modules and its PGlite from one file to the next
 *   (test/helpers/db.ts empties it between files), and files that wait on processes, browsers and installs share
 *   the cores with in-process ones. The files that install the tarball start first (test/helpers/sequencer.ts).
 */
export default defineConfig({
  test: {
    globalSetup: ['test/helpers/run-tmpdir.ts', 'test/helpers/global-setup.ts', 'test/helpers/pack-once.ts'],
    pool: 'forks',
    // Four forks: a spawned process's start, a browser's page and a database round trip leave a fork waiting. Four
    // finished sooner than three here (460-464 s against 471-490 s, the same CPU), with the 2 cores busy throughout
    // (vmstat: 1 % idle); six starved the reliability tests' servers. Not isolated: a fork runs file after file (the
    // projects say whether modules are reset between them); all live for the run, as tinypool's teardown of an idle
    // fork fails the run when the forks are reused. The forks run with FORK_NODE_FLAGS: spawned hookruns' TEST_NODE_FLAGS and a larger young generation.
    poolOptions: { forks: { maxForks: FORKS, minForks: FORKS, isolate: false, execArgv: FORK_NODE_FLAGS } },
    sequence: { sequencer: LongestFirstSequencer },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 20_000,
    projects: [
      { extends: true, test: { name: 'isolated', include: ISOLATED, poolOptions: { forks: { isolate: true } } } },
      { extends: true, test: { name: 'suite', include: ['test/**/*.test.ts'], exclude: ISOLATED, poolOptions: { forks: { isolate: false } } } },
    ],
  },
});
