import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { FORKS, PACKAGE } from './projects.js';

/**
 * Start the long files first, so the last minute of a run is not one of them
 * alone on an otherwise idle machine. The files that install the tarball go
 * early, but they all wait for its `npm pack` (a build, most of a minute on
 * these machines): the first of them starts the pack, the other forks take
 * the longest files that need no tarball meanwhile, and the rest of the
 * package files follow. Otherwise vitest's own order (slowest last time
 * first, or largest file first on a clean clone).
 */
export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const packageRank = (spec: TestSpecification) => PACKAGE.indexOf(relative(spec.project.config.root, spec.moduleId));
    const packaged = sorted.filter((spec) => packageRank(spec) >= 0).sort((a, b) => packageRank(a) - packageRank(b));
    const others = sorted.filter((spec) => packageRank(spec) < 0);
    return [...packaged.slice(0, 1), ...others.slice(0, FORKS - 1), ...packaged.slice(1), ...others.slice(FORKS - 1)];
  }
}
