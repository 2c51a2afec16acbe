import { ConfigError } from '../errors.js';
import { dependencySpec, type PackageJson } from './init-dependency.js';

/** One of hookrun's scripts as added: its name, and the name of the app's own script it stood aside for. */
export interface AddedScript {
  name: string;
  command: string;
  insteadOf?: string;
}

/** What merging hookrun's scripts and dependencies into an app's package.json did, for init to report. */
export interface PackageJsonMerge {
  /** The new package.json, or undefined when it already had everything. */
  text: string | undefined;
  scripts: AddedScript[];
  /** hookrun's scripts not added: their name and `hookrun:<name>` are both the app's, for other commands. */
  scriptsNotAdded: string[];
  dependencies: Array<{ section: 'dependencies' | 'devDependencies'; name: string; spec: string }>;
  /** The script that runs each of hookrun's commands after the merge (`dev` → `dev` or `hookrun:dev`). */
  scriptFor: Record<string, string>;
}

/** Parse an app's package.json, or say which file is broken and how to go on. */
export function parsePackageJson(text: string, file: string): PackageJson {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${file} is not valid JSON (${(error as Error).message}): fix it, then run hookrun init again.`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new ConfigError(`${file} is not a JSON object: fix it, then run hookrun init again.`);
  return parsed as PackageJson;
}

/**
 * hookrun's scripts and dependencies added to an app's package.json, nothing
 * of the app's removed or changed: a dependency the app names already keeps
 * its spec, and a script name the app uses for another command keeps it,
 * hookrun's going in as `hookrun:<name>`. The app's indentation is kept.
 */
export function mergePackageJson(text: string, file: string, ours: PackageJson): PackageJsonMerge {
  const pkg = parsePackageJson(text, file);
  const merge: PackageJsonMerge = { text: undefined, scripts: [], scriptsNotAdded: [], dependencies: [], scriptFor: {} };
  const scripts = { ...pkg.scripts };
  for (const [name, command] of Object.entries(ours.scripts ?? {})) {
    const already = Object.keys(scripts).find((existing) => scripts[existing] === command);
    if (already !== undefined) {
      merge.scriptFor[name] = already;
      continue;
    }
    const free = [name, `hookrun:${name}`].find((candidate) => scripts[candidate] === undefined);
    if (free === undefined) {
      merge.scriptsNotAdded.push(name);
      continue;
    }
    scripts[free] = command;
    merge.scriptFor[name] = free;
    merge.scripts.push({ name: free, command, ...(free === name ? {} : { insteadOf: name }) });
  }
  if (merge.scripts.length > 0) pkg.scripts = scripts;
  for (const section of ['dependencies', 'devDependencies'] as const) {
    for (const [name, spec] of Object.entries(ours[section] ?? {})) {
      if (dependencySpec(pkg, name) !== undefined) continue;
      pkg[section] = { ...pkg[section], [name]: spec };
      merge.dependencies.push({ section, name, spec });
    }
  }
  if (merge.scripts.length > 0 || merge.dependencies.length > 0) {
    const indent = /\n([ \t]+)"/.exec(text)?.[1] ?? 2;
    merge.text = `${JSON.stringify(pkg, null, indent)}${text.endsWith('\n') ? '\n' : ''}`;
  }
  return merge;
}
