import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The projects whose files take longest (installs and builds, browsers, spawned processes) first. */
const FIRST = ['package', 'browser', 'process'];

/**
 * Start the long files first, so the last minute of a run is not one of them
 * alone on an otherwise idle machine; within a project, vitest's own order
 * (slowest last time first, or largest file first on a clean clone).
 */
export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const at = FIRST.indexOf(spec.project.name);
      return at < 0 ? FIRST.length : at;
    };
    return sorted
      .map((spec, i) => ({ spec, i }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i)
      .map(({ spec }) => spec);
  }
}
