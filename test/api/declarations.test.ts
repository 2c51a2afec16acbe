import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { REPO_ROOT } from '../helpers/spawn-hookrun.js';

/*
 * What a project's TypeScript sees of hookrun: `dist/index.d.ts` and every
 * declaration file it reaches through relative imports. A change to the
 * public types shows as a change to the committed snapshot (review it, then
 * `npx vitest run test/api/declarations.test.ts -u`); an engine type that
 * leaks into them fails the assertions below whatever the snapshot says.
 */

const DIST = join(REPO_ROOT, 'dist');
/** `from './x.js'`, `import('./x.js')`: the relative module specifiers of a declaration file. */
const RELATIVE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

/** The declaration files reachable from dist/index.d.ts, by path relative to dist/, in the order found (breadth first). */
function reachableDeclarations(): Map<string, string> {
  const found = new Map<string, string>();
  const queue = [join(DIST, 'index.d.ts')];
  while (queue.length > 0) {
    const file = queue.shift()!;
    const name = relative(DIST, file);
    if (found.has(name)) continue;
    const text = readFileSync(file, 'utf8');
    found.set(name, text);
    for (const [, specifier] of text.matchAll(RELATIVE_IMPORT)) queue.push(resolve(dirname(file), specifier!.replace(/\.js$/, '.d.ts')));
  }
  return found;
}

/** Engine types a project must never see in hookrun's declarations. */
const ENGINE_NAMES = ['Database', 'Config', 'Queryable', 'WriteBatch', 'Clock', 'StripeApi', 'ClaimedEvent', 'Metrics', 'EngineJobContext', 'ResolvedJob'];

describe("the package's declared types (dist/index.d.ts and what it imports)", { timeout: 180_000 }, () => {
  let declarations: Map<string, string>;
  beforeAll(async () => {
    await ensureDistBuilt();
    declarations = reachableDeclarations();
  }, 180_000);

  it('reach only dist/index.d.ts and dist/api/', () => {
    expect([...declarations.keys()].filter((name) => name !== 'index.d.ts' && !name.startsWith('api/'))).toEqual([]);
  });

  it('name no engine type (outside comments: "Supabase Database Webhooks" is prose)', () => {
    for (const [name, text] of declarations) {
      const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
      for (const engine of ENGINE_NAMES) expect(new RegExp(`\\b${engine}\\b`).test(code), `${name} names ${engine}`).toBe(false);
    }
  });

  it('match the committed snapshot', async () => {
    const text = [...declarations.keys()]
      .sort()
      .map((name) => `// ===== dist/${name}\n${declarations.get(name)!.trimEnd()}\n`)
      .join('\n');
    await expect(text).toMatchFileSnapshot('__snapshots__/public-api.d.ts.txt');
  });
});
