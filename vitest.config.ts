import { defineConfig } from 'vitest/config';
import { BROWSER, PACKAGE, PROCESS } from './test/helpers/projects.js';
import LongestFirstSequencer from './test/helpers/sequencer.js';

/**
 * Two projects (docs/architecture.md says which one a new test belongs to), run one after the other in one pool of
 * three forks that live for the whole run:
 * - `process`: files that start processes, browsers or installs (test/helpers/projects.ts), each with its own
 *   module graph, longest first;
 * - `unit`: everything else, in-process (the app, PGlite and PostgreSQL, the CLI through src/cli/run.ts). A fork
 *   keeps its modules and its PGlite from one file to the next (test/helpers/db.ts empties it between files).
 */
export default defineConfig({
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    // Three forks keep 2 cores busy while spawned processes start; six starved the reliability tests' servers and ran
    // no faster. Not isolated: a fork runs file after file (the projects say whether modules are reset between them);
    // all three live for the run, as tinypool's teardown of an idle fork fails the run when the forks are reused.
    poolOptions: { forks: { maxForks: 3, minForks: 3, isolate: false } },
    sequence: { sequencer: LongestFirstSequencer },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 20_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'process',
          include: [...PACKAGE, ...BROWSER, ...PROCESS],
          poolOptions: { forks: { isolate: true } },
          globalSetup: ['test/helpers/global-setup.ts', 'test/helpers/pack-once.ts'],
        },
      },
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: [...PACKAGE, ...BROWSER, ...PROCESS], poolOptions: { forks: { isolate: false } } },
      },
    ],
  },
});
