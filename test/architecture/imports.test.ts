import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '..', '..', 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Every local module a file imports: static, type-only, re-exports and dynamic `import('./x.js')`. */
function localImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => m[1]!);
  return specifiers.map((s) => resolve(dirname(file), s.replace(/\.js$/, '.ts')));
}

const graph = new Map(sourceFiles(SRC).map((file) => [file, localImports(file)]));
const name = (file: string) => relative(SRC, file);

/** Every import cycle, each reported once as a path a → b → … → a. */
function cycles(): string[] {
  const found = new Set<string>();
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.add([...stack.slice(stack.indexOf(next)), next].map(name).join(' → '));
      else if (!state.has(next) && graph.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return [...found];
}

describe('the layout (docs/architecture.md)', () => {
  it('has no import cycle in src/', () => {
    expect(cycles()).toEqual([]);
  });

  it('every import resolves to a file in src/ (the check above sees every edge)', () => {
    const missing = [...graph].flatMap(([file, imports]) => imports.filter((i) => !graph.has(i)).map((i) => `${name(file)} → ${name(i)}`));
    expect(missing).toEqual([]);
  });

  it('leaf modules import nothing local', () => {
    for (const leaf of ['errors.ts', 'clock.ts', 'backoff.ts', 'secure-compare.ts', 'since.ts', 'deadline.ts']) {
      expect(graph.get(join(SRC, leaf)), leaf).toEqual([]);
    }
    expect(graph.get(join(SRC, 'config.ts'))).toEqual([join(SRC, 'errors.ts'), join(SRC, 'config-values.ts'), join(SRC, 'platform-config.ts'), join(SRC, 'webhooks', 'provider.ts'), join(SRC, 'webhooks', 'providers', 'index.ts')]);
    expect(graph.get(join(SRC, 'config-values.ts'))).toEqual([join(SRC, 'errors.ts')]);
    expect(graph.get(join(SRC, 'platform-config.ts'))).toEqual([join(SRC, 'errors.ts')]);
  });

  it('the provider list is a floor below config: everything it reaches stays in webhooks/ or the leaves', () => {
    const allowed = (file: string) => name(file).startsWith('webhooks/') || ['errors.ts', 'secure-compare.ts'].includes(name(file));
    const reached = new Set<string>();
    const visit = (file: string) => {
      for (const next of graph.get(file) ?? []) if (!reached.has(next)) (reached.add(next), visit(next));
    };
    visit(join(SRC, 'webhooks', 'providers', 'index.ts'));
    expect([...reached].filter((file) => !allowed(file)).map(name)).toEqual([]);
    expect([...reached].map(name).filter((file) => ['webhooks/receive.ts', 'webhooks/verifiers.ts', 'webhooks/samples.ts'].includes(file))).toEqual([]);
  });

  it('no file under src/ is over 250 lines', () => {
    const long = [...graph.keys()].map((f) => [name(f), readFileSync(f, 'utf8').split('\n').length] as const).filter(([, lines]) => lines > 250);
    expect(long).toEqual([]);
  });

  it('the check finds a cycle when there is one', () => {
    graph.set(join(SRC, 'x-a.ts'), [join(SRC, 'x-b.ts')]);
    graph.set(join(SRC, 'x-b.ts'), [join(SRC, 'x-a.ts')]);
    try {
      expect(cycles()).toEqual(['x-a.ts → x-b.ts → x-a.ts']);
    } finally {
      graph.delete(join(SRC, 'x-a.ts'));
      graph.delete(join(SRC, 'x-b.ts'));
    }
  });
});
