import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A project with two handlers of its own on every given Clerk type, beside
 * the shipped mirror: three handlers per event. One runs a query on the
 * delivery's transaction, the other only reads the event; both run isolated
 * (a savepoint each), as every project handler does. `hookrun` resolves to
 * the checkout `root` (a symlink, as `npm install` would place it).
 */
export function makeFanOutProject(types: readonly string[], root: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-bench-fan-out-'));
  mkdirSync(join(dir, 'handlers'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(root, join(dir, 'node_modules', 'hookrun'), 'dir');
  const on = JSON.stringify([...new Set(types)].map((type) => `clerk:${type}`));
  writeFileSync(
    join(dir, 'handlers', 'audit-log.js'),
    `import { defineHandler } from 'hookrun';\nexport default defineHandler({ on: ${on}, async run(event, ctx) { await ctx.db.query('SELECT $1::text AS id', [event.data.id]); } });\n`,
  );
  writeFileSync(
    join(dir, 'handlers', 'count-types.js'),
    `import { defineHandler } from 'hookrun';\nconst seen = new Map();\nexport default defineHandler({ on: ${on}, run(event) { seen.set(event.type, (seen.get(event.type) ?? 0) + 1); } });\n`,
  );
  return dir;
}
