import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { PACKAGE } from './projects.js';

/**
 * Start the long files first, so the last minute of a run is not one of them
 * alone on an otherwise idle machine: the files that install the tarball (npm
 * install, next build) before the rest; otherwise vitest's own order (slowest
 * last time first, or largest file first on a clean clone).
 */
export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => (PACKAGE.includes(relative(spec.project.config.root, spec.moduleId)) ? 0 : 1);
    return sorted
      .map((spec, i) => ({ spec, i }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i)
      .map(({ spec }) => spec);
  }
}
