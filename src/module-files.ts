import { readdirSync } from 'node:fs';
import { extname, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { enableTypeScript } from './typescript-loader.js';

/** The extensions a project's job and handler files may have (TypeScript runs without a build step; `.cjs` is CommonJS, requiring hookrun). */
export const PROJECT_EXTENSIONS: readonly string[] = ['.ts', '.mts', '.js', '.mjs', '.cjs'];

/** How a file is named in messages: relative to the working directory when inside it, else absolute. */
export function displayPath(file: string | URL): string {
  const path = typeof file === 'string' ? file : fileURLToPath(file);
  const rel = relative(process.cwd(), path);
  return rel === '' || rel.startsWith('..') ? path : rel;
}

function isModuleFile(file: string, extensions: readonly string[]): boolean {
  if (file.startsWith('_') || file.startsWith('.')) return false; // helpers and editor files
  if (/\.(d|test|spec)\.[cm]?[jt]s$/.test(file)) return false;
  return extensions.some((ext) => file.endsWith(ext));
}

/** One file of a "one file, one thing" folder (jobs/, handlers/): its URL and its name (the file name less its extension). */
export interface ModuleFile {
  url: URL;
  name: string;
  file: string;
}

/**
 * The module files in `dir`, sorted; undefined when the folder does not
 * exist. Declaration, test and source-map files and names starting with `_`
 * or `.` are left out.
 */
export function listModuleFiles(dir: URL, extensions: readonly string[]): ModuleFile[] | undefined {
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((file) => isModuleFile(file, extensions))
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return files.map((file) => ({ url: new URL(file, dir), name: file.slice(0, file.length - extname(file).length), file }));
}

/** The default export of a module file (TypeScript included). */
export async function importDefault(url: URL): Promise<unknown> {
  if (/\.m?ts$/.test(url.pathname)) await enableTypeScript();
  return ((await import(pathToFileURL(fileURLToPath(url)).href)) as { default?: unknown }).default;
}
