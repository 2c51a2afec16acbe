import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { relativeLinks } from '../helpers/markdown-links.js';
import { REPO_ROOT } from '../helpers/spawn-hookrun.js';

/**
 * Generated from the config definitions by its own script, and linked before
 * that script lands: while it is absent, a link to it is not reported. Once
 * it exists it is checked like every other page.
 */
const GENERATED_PAGES = new Set(['docs/configuration.md']);
const README_MAX_BYTES = 12_500;

const DOCS = join(REPO_ROOT, 'docs');
const docPages = readdirSync(DOCS)
  .filter((f) => f.endsWith('.md'))
  .sort()
  .map((f) => `docs/${f}`);
const pages = ['README.md', ...docPages];

/** Every *.md file of the repository (not node_modules, not .git): the reference checks cover them all. */
function markdownFiles(dir = REPO_ROOT): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name === 'node_modules' || name === '.git' || name === 'dist') return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [relative(REPO_ROOT, path)] : [];
  });
}

/** The text outside fenced code blocks and inline code: what a reader sees as prose. */
function prose(text: string): string {
  return text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a page offers (a repeated heading gets -1, -2, … as on GitHub). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of text.replace(/```[\s\S]*?```/g, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading!.trim());
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Relative links of a page, outside code (helpers/markdown-links.ts). */
const links = relativeLinks;

describe('the documentation', () => {
  it('README.md stays a front page', () => {
    expect(statSync(join(REPO_ROOT, 'README.md')).size).toBeLessThanOrEqual(README_MAX_BYTES);
  });

  it('links every docs page from README.md', () => {
    const linked = new Set(links(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')).map((t) => t.split('#')[0]));
    expect(docPages.filter((page) => !linked.has(page))).toEqual([]);
    for (const page of GENERATED_PAGES) expect(linked.has(page), page).toBe(true);
  });

  it('every relative link of README.md and docs/*.md reaches a file, and its anchor a heading there', () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(join(REPO_ROOT, page), 'utf8');
      for (const target of links(text)) {
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const file = path === '' ? page : relative(REPO_ROOT, join(REPO_ROOT, dirname(page), path));
        if (!existsSync(join(REPO_ROOT, file))) {
          // A generated page may be linked before its generator has run (see GENERATED_PAGES).
          if (!GENERATED_PAGES.has(file)) broken.push(`${page}: ${target} (no file ${file})`);
          continue;
        }
        if (anchor && file.endsWith('.md') && !anchors(readFileSync(join(REPO_ROOT, file), 'utf8')).has(anchor)) {
          broken.push(`${page}: ${target} (no heading #${anchor} in ${file})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('no *.md file cites a document outside the repository, an issue number or a missing root page', () => {
    const found: string[] = [];
    for (const file of markdownFiles()) {
      const text = readFileSync(join(REPO_ROOT, file), 'utf8');
      for (const name of ['DESIGN.md', 'STYLE.md', 'BENCHMARKS.md', 'RELIABILITY.md', 'ARCHITECTURE.md']) {
        if (text.includes(name)) found.push(`${file}: ${name}`);
      }
      for (const m of prose(text).matchAll(/(?<![\w&])#\d+\b|\bissues? \d+/gi)) found.push(`${file}: "${m[0]}"`);
    }
    expect(found).toEqual([]);
  });

  it('every test file README.md and docs/*.md name exists', () => {
    const named = pages.flatMap((page) =>
      [...readFileSync(join(REPO_ROOT, page), 'utf8').matchAll(/\btest\/[\w./-]+\.(?:ts|sh)\b/g)].map((m) => `${page}: ${m[0]}`),
    );
    expect(named.filter((entry) => !existsSync(join(REPO_ROOT, entry.split(': ')[1]!)))).toEqual([]);
  });
});
