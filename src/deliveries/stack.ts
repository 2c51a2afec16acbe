import { fileURLToPath } from 'node:url';

/** The most frames a kept stack has, and its longest text. */
const MAX_FRAMES = 12;
const MAX_STACK_CHARS = 4000;

/** hookrun's own folder (src/ or dist/ of the package): frames there are the engine's. */
const ENGINE_ROOT = fileURLToPath(new URL('..', import.meta.url));

const isNoise = (frame: string) => frame.includes('node:internal') || frame.includes('(native)') || frame.includes('<anonymous>');
const isEngine = (frame: string) => frame.includes(ENGINE_ROOT) || frame.includes('/node_modules/hookrun/');
const isLibrary = (frame: string) => frame.includes('/node_modules/') || frame.includes('\\node_modules\\');

/**
 * The frames of an error's stack that say where it was thrown: the
 * project's own code first (the handler's file and what it called), then a
 * library's, then hookrun's, without Node's internals; at most 12 frames and
 * 4000 characters. Undefined when the error has no stack.
 */
export function stackOf(error: unknown): string | undefined {
  const stack = (error as { stack?: unknown } | null)?.stack;
  if (typeof stack !== 'string') return undefined;
  const frames = stack
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('at ') && !isNoise(line));
  if (frames.length === 0) return undefined;
  const own = frames.filter((f) => !isEngine(f) && !isLibrary(f));
  const libraries = frames.filter((f) => !isEngine(f) && isLibrary(f));
  const engine = frames.filter((f) => isEngine(f));
  return [...own, ...libraries, ...engine].slice(0, MAX_FRAMES).join('\n').slice(0, MAX_STACK_CHARS);
}
