import type { PackageJsonMerge } from './init-package-json.js';

/**
 * What `hookrun init` does with one of its files when the folder has one by
 * that name already. Nothing is ever overwritten or removed:
 * - `add`: files every app keeps lists in (`.env`, `.env.example`,
 *   `.gitignore`, `.dockerignore`) get the settings or lines they lack, at the end;
 * - `keep`: the app's own README, tsconfig and container files stay as they are;
 * - `refuse`: hookrun's own files (platform.json, the sample job and handler)
 *   must be what init writes, or init writes nothing.
 */
type WhenPresent = 'add' | 'keep' | 'refuse';

const WHEN_PRESENT: Readonly<Record<string, WhenPresent>> = {
  '.env': 'add',
  '.env.example': 'add',
  '.gitignore': 'add',
  '.dockerignore': 'add',
  'README.md': 'keep',
  'tsconfig.json': 'keep',
  Dockerfile: 'keep',
  'compose.yaml': 'keep',
};

/** One file's step: written new, left as it is (the same, or the app's own), added to (package.json: merged), or in the way. */
export type FileStep =
  | { path: string; kind: 'create'; text: string }
  | { path: string; kind: 'merge'; text: string }
  | { path: string; kind: 'same' }
  | { path: string; kind: 'keep' }
  | { path: string; kind: 'append'; text: string; added: string[] }
  | { path: string; kind: 'conflict' };

/** Where the hookrun dependency init writes came from: the app's own package.json, the running hookrun's install, or its version alone. */
export type SpecSource = 'app' | 'installed' | 'version';

/** What `hookrun init` did in a folder, file by file, for the command to report. */
export interface InitResult {
  dir: string;
  /** The folder had files already (an app, a package, a project init made before). */
  existing: boolean;
  steps: FileStep[];
  /** What was added to the folder's own package.json; undefined when init wrote a new one. */
  packageJson: PackageJsonMerge | undefined;
  hookrunSpec: string;
  specSource: SpecSource;
}

/** A dotenv line's variable name (`KEY=`, `export KEY =`), or undefined for a comment or blank line. */
const envKey = (line: string) => /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line)?.[1];

/** An ignore-file pattern compared as git reads it: `node_modules`, `/node_modules` and `node_modules/` are one. */
const ignorePattern = (line: string) => line.trim().replace(/^\//, '').replace(/\/$/, '');

/**
 * The settings of `ours` (each with the comment lines just above it) whose
 * variable `existing` does not set, and their names. A variable already set
 * keeps its value: a secret the app already has is never replaced.
 */
function missingSettings(existing: string, ours: string): { text: string; added: string[] } {
  const have = new Set(existing.split('\n').map(envKey));
  let comments: string[] = [];
  const blocks: string[] = [];
  const added: string[] = [];
  for (const line of ours.trimEnd().split('\n')) {
    const key = envKey(line);
    if (key === undefined) {
      comments.push(line);
      continue;
    }
    if (!have.has(key)) {
      blocks.push([...comments, line].join('\n'));
      added.push(key);
    }
    comments = [];
  }
  return { text: blocks.join('\n'), added };
}

/** The lines of an ignore file `existing` lacks. */
function missingLines(existing: string, ours: string): { text: string; added: string[] } {
  const have = new Set(existing.split('\n').map(ignorePattern));
  const added = ours.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#') && !have.has(ignorePattern(line)));
  return { text: added.join('\n'), added };
}

/** `existing` with `addition` after it, on lines of their own. */
const appended = (existing: string, addition: string) => `${existing}${existing === '' || existing.endsWith('\n') ? '' : '\n'}${addition}\n`;

/** What init does with `path`, given what it would write there and what is there now (undefined: nothing). */
export function planFile(path: string, ours: string, existing: string | undefined): FileStep {
  if (existing === undefined) return { path, kind: 'create', text: ours };
  if (existing === ours) return { path, kind: 'same' };
  const when = WHEN_PRESENT[path] ?? 'refuse';
  if (when === 'keep') return { path, kind: 'keep' };
  if (when === 'refuse') return { path, kind: 'conflict' };
  const missing = path.startsWith('.env') ? missingSettings(existing, ours) : missingLines(existing, ours);
  return missing.added.length === 0 ? { path, kind: 'same' } : { path, kind: 'append', text: appended(existing, missing.text), added: missing.added };
}
