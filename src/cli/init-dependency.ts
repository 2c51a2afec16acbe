import { readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, parse, relative, resolve, sep } from 'node:path';

/** The dependency sections a package.json may name hookrun in, in the order npm looks at them. */
export const DEPENDENCY_SECTIONS = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'] as const;

/** A parsed package.json, as far as init reads it. */
export type PackageJson = Record<string, unknown> & Partial<Record<(typeof DEPENDENCY_SECTIONS)[number] | 'scripts', Record<string, string>>>;

/** The spec a package.json gives `name` in any of its dependency sections, if it names it. */
export function dependencySpec(pkg: PackageJson, name: string): string | undefined {
  for (const section of DEPENDENCY_SECTIONS) {
    const spec = pkg[section]?.[name];
    if (typeof spec === 'string') return spec;
  }
  return undefined;
}

/** A folder's package.json, or undefined when it has none (or none that parses). */
function readPackageJson(dir: string): PackageJson | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;
  } catch {
    return undefined;
  }
}

/**
 * A `file:` path written for `from`'s package.json, rewritten for `to`'s (npm
 * resolves it against the package.json's folder): relative, unless the two
 * share nothing but the filesystem root, where the absolute path reads better.
 */
function rebasePathSpec(spec: string, from: string, to: string): string {
  const match = /^(file|link):(?!\/\/)(.*)$/.exec(spec);
  if (!match || isAbsolute(match[2]!)) return spec;
  const target = resolve(from, match[2]!);
  const rel = relative(to, target);
  const climbsToRoot = resolve(to, ...rel.split(sep).filter((part) => part === '..')) === parse(to).root;
  return `${match[1]}:${climbsToRoot ? target : rel || '.'}`;
}

/**
 * How the running hookrun was installed, as a dependency spec for a package.json
 * in `target`: what the package.json beside the node_modules that holds it says.
 * That is npx's own folder (`npx ./hookrun-0.2.0.tgz` gives `file:…tgz`, `npx
 * github:owner/hookrun` the git URL, `npx hookrun` `^0.2.0`) or the project it
 * was installed into. npm keeps no other record: modern npm drops `_resolved`
 * and `_from`, and npx passes no spec in the environment. Undefined for a
 * global install or a checkout, where nothing says where it came from.
 */
export function installedSpec(packageRoot: string, target: string): string | undefined {
  const modules = dirname(packageRoot);
  if (basename(modules) !== 'node_modules') return undefined;
  const owner = dirname(modules);
  const pkg = readPackageJson(owner);
  const spec = pkg && dependencySpec(pkg, 'hookrun');
  return spec === undefined ? undefined : rebasePathSpec(spec, owner, target);
}
