import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

/** hookrun's public entry as a project file imports it (from source, under Vitest). */
export const HOOKRUN = JSON.stringify(join(import.meta.dirname, '..', '..', 'src', 'index.ts'));

/** A maker of project folders with given files (paths relative to it), removed after each test. */
export function useProjectDirs(prefix = 'hookrun-project-'): (files: Record<string, string>) => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return (files) => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    return dir;
  };
}
