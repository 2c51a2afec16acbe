/**
 * The relative links of a markdown page, outside fenced code: inline `[text](target)` and `![alt](target)`, and
 * reference definitions `[id]: target`. A target with a scheme (https:, mailto:) is not relative and is left out.
 * Shared by the link checks of the repository (docs-links.test.ts) and of the tarball (tarball-links.test.ts).
 */
export function relativeLinks(text: string): string[] {
  const outsideCode = text.replace(/```[\s\S]*?```/g, '');
  const inline = [...outsideCode.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
  const references = [...outsideCode.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/gm)].map((m) => m[1]!);
  return [...inline, ...references].filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}
