import * as nodeModule from 'node:module';

/*
 * Project files are ES modules (`import … from 'hookrun'`, `export default`),
 * in whatever package holds them. tsx follows the package's "type": a `.ts`
 * file in a package without `"type": "module"` (what `npm init -y` and
 * create-next-app write) is CommonJS to it, and with tsx registered for
 * `import()` alone, Node's own CommonJS loader gets that file: Node 20
 * finds its ES syntax and require()s it in a cycle with the import() in
 * flight, Node 22 cannot link hookrun under it, Node 24 strips its types
 * and hands back `{ default: { default } }`. A resolve hook in front of
 * tsx's loads such a file as the ES module it is, as Node loads a `.js` file
 * with ES syntax in that package (module syntax detection). `.cts` and
 * anything under node_modules keep their format.
 */

interface Resolved {
  url: string;
  format?: string | null;
}
type NextResolve = (specifier: string, context: object) => Resolved;

/** Node 22.15+ / 23.5+: in-thread hooks, which run before and around the off-thread ones (module.register). */
type RegisterHooks = (hooks: { resolve(specifier: string, context: object, next: NextResolve): Resolved }) => unknown;

function isProjectTypeScript(url: string): boolean {
  if (!url.startsWith('file:')) return false;
  const path = new URL(url).pathname;
  return path.endsWith('.ts') && !path.includes('/node_modules/');
}

const asModule = (resolved: Resolved): Resolved =>
  resolved.format === 'commonjs' && isProjectTypeScript(resolved.url) ? { ...resolved, format: 'module' } : resolved;

/** The same hook for module.register (Node 20, without registerHooks), which takes a module: its own thread runs it. */
const OFF_THREAD_HOOK = `export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (resolved.format !== 'commonjs' || !resolved.url.startsWith('file:')) return resolved;
  const path = new URL(resolved.url).pathname;
  return path.endsWith('.ts') && !path.includes('/node_modules/') ? { ...resolved, format: 'module' } : resolved;
}`;

function loadTypeScriptAsModules(): void {
  const registerHooks = (nodeModule as { registerHooks?: RegisterHooks }).registerHooks;
  if (registerHooks) registerHooks({ resolve: (specifier, context, next) => asModule(next(specifier, context)) });
  else nodeModule.register(`data:text/javascript,${encodeURIComponent(OFF_THREAD_HOOK)}`);
}

let typescript: Promise<void> | undefined;

/**
 * Let `import()` load a project's TypeScript files (tsx's loader), once per
 * process: jobs and handlers run without a build step, in a package with or
 * without `"type": "module"`. Not under Vitest, which compiles TypeScript
 * itself.
 */
export function enableTypeScript(): Promise<void> {
  if ('__vitest_worker__' in globalThis) return Promise.resolve(); // a Vitest worker (not a process it spawned)
  return (typescript ??= import('tsx/esm/api').then(({ register }) => {
    register();
    loadTypeScriptAsModules();
  }));
}
