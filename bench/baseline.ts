import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A `--baseline` entry as a built checkout: a folder with `dist/main.js` is
 * used as it is; anything else is a git ref of this repository, exported
 * into a folder under the system's temp dir named by its commit, installed
 * (`npm ci`) and built there once, and reused by the next run.
 */
export function baselineRoot(spec: string, repo: string, progress: (line: string) => void): string {
  if (existsSync(join(spec, 'dist', 'main.js'))) return spec;
  let commit: string;
  try {
    commit = execFileSync('git', ['rev-parse', '--verify', `${spec}^{commit}`], { cwd: repo, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    throw new Error(`--baseline ${spec}: neither a built checkout (no dist/main.js there) nor a git ref of this repository`);
  }
  const dir = join(tmpdir(), `hookrun-baseline-${commit.slice(0, 12)}`);
  if (existsSync(join(dir, 'dist', 'main.js'))) return dir;
  progress(`baseline ${spec} (${commit.slice(0, 12)}): exporting, installing and building in ${dir}`);
  mkdirSync(dir, { recursive: true });
  execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C "${dir}"`], { cwd: repo, stdio: 'inherit' });
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: dir, stdio: 'inherit' });
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: dir, stdio: 'inherit' });
  return dir;
}
