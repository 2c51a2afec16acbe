/**
 * `withHookrun(nextConfig)`: what a Next.js build must be told so the
 * deployed function holds hookrun. Next.js traces the files each route
 * imports (`output: 'standalone'` and Vercel copy only those), and hookrun
 * reads two folders no import names: the project's (`jobs/`, `handlers/`,
 * platform.json, `migrations/`) and its own migrations (`drizzle/`). Without
 * them every route answers 503. Next.js matches `outputFileTracingIncludes`
 * keys as picomatch globs against the route (`/api/[...hookrun]`), where `[…]`
 * is a character class: the key written here is the route, escaped.
 */
import { relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where hookrun is mounted and which project it serves; every field is optional. */
export interface WithHookrunOptions {
  /** The hookrun project folder, relative to the app, as given to `createNextRoute({ project })` (default `hookrun`). */
  project?: string;
  /** The route file's path under `app/`, as Next.js names it (default `/api/[...hookrun]`). */
  route?: string;
}

/** The fields of a Next.js config withHookrun writes (merged with the config's own); the rest passes through untouched. */
export interface HookrunNextConfigFields {
  serverExternalPackages: string[];
  outputFileTracingIncludes: Record<string, string[]>;
}

/** The function of the build phase Next.js also accepts as its config. */
type NextConfigFunction<T> = (phase: string, context: { defaultConfig: unknown }) => T | Promise<T>;
/** What withHookrun returns for a config function: the function's result, merged. */
type MergedConfigFunction<T> = (phase: string, context: { defaultConfig: unknown }) => Promise<T & HookrunNextConfigFields>;

const DEFAULT_PROJECT = 'hookrun';
const DEFAULT_ROUTE = '/api/[...hookrun]';
/** hookrun's package folder: dist/next/ is two levels below it. */
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A route as a picomatch pattern that matches only itself: glob characters escaped. */
function routeKey(route: string): string {
  const path = '/' + route.replace(/^\/+|\/+$/g, '');
  return path.replace(/[\\[\]{}()*?!+@]/g, (char) => `\\${char}`);
}

/** A path relative to the app (`cwd`), in the `./a/b` form Next.js's include globs take. */
function fromApp(path: string, cwd: string): string {
  const rel = relative(cwd, path).split(sep).join('/');
  return rel.startsWith('..') ? rel : `./${rel}`;
}

/** The globs the hookrun route needs beside what its imports reach. */
function hookrunTracedFiles(options: WithHookrunOptions = {}, cwd: string = process.cwd()): string[] {
  const project = (options.project ?? DEFAULT_PROJECT).replace(/^\.\/+/, '').replace(/\/+$/, '');
  return [`./${project}/**/*`, `${fromApp(PACKAGE_ROOT, cwd).replace(/\/+$/, '')}/drizzle/**/*`];
}

const union = (first: readonly string[] | undefined, second: readonly string[]): string[] => [...new Set([...(first ?? []), ...second])];

/** The config with hookrun's fields merged in; what the user set is kept. */
function merged<T extends object>(config: T, options: WithHookrunOptions): T & HookrunNextConfigFields {
  const own = config as T & Partial<HookrunNextConfigFields>;
  const key = routeKey(options.route ?? DEFAULT_ROUTE);
  const includes = own.outputFileTracingIncludes ?? {};
  return {
    ...config,
    serverExternalPackages: union(own.serverExternalPackages, ['hookrun']),
    outputFileTracingIncludes: { ...includes, [key]: union(includes[key], hookrunTracedFiles(options)) },
  };
}

/**
 * Wrap the app's Next.js config (`export default withHookrun({ … })` in
 * next.config.mjs or .ts): hookrun stays out of the bundle
 * (`serverExternalPackages`), and the route's traced files include the
 * project folder and hookrun's migrations (`outputFileTracingIncludes`), so
 * `output: 'standalone'` and Vercel deploy what the route reads at run time.
 */
export function withHookrun<T extends object>(nextConfig: NextConfigFunction<T>, options?: WithHookrunOptions): MergedConfigFunction<T>;
export function withHookrun<T extends object>(nextConfig: T, options?: WithHookrunOptions): T & HookrunNextConfigFields;
export function withHookrun<T extends object>(
  nextConfig: T | NextConfigFunction<T>,
  options: WithHookrunOptions = {},
): (T & HookrunNextConfigFields) | MergedConfigFunction<T> {
  if (typeof nextConfig === 'function') return async (phase, context) => merged(await nextConfig(phase, context), options);
  return merged(nextConfig, options);
}
