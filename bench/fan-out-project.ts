import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A project with two handlers of its own on every given Clerk type, beside
 * the shipped mirror: three handlers per event. Neither touches the
 * database (one reads the event's fields, one counts types), so what the
 * 3-handler drain adds over the 1-handler drain is the engine's own cost of
 * two more deliveries per event: their rows, claims, runs and settles. A
 * handler's own queries cost what they cost; they are not the engine's.
 * `hookrun` resolves to the checkout `root` (a symlink, as `npm install`
 * would place it).
 */
export function makeFanOutProject(types: readonly string[], root: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-bench-fan-out-'));
  mkdirSync(join(dir, 'handlers'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(root, join(dir, 'node_modules', 'hookrun'), 'dir');
  const on = JSON.stringify([...new Set(types)].map((type) => `clerk:${type}`));
  writeFileSync(
    join(dir, 'handlers', 'check-ids.js'),
    `import { defineHandler } from 'hookrun';\nexport default defineHandler({ on: ${on}, run(event) { if (typeof event.data.id !== 'string') throw new Error('no id'); } });\n`,
  );
  writeFileSync(
    join(dir, 'handlers', 'count-types.js'),
    `import { defineHandler } from 'hookrun';\nconst seen = new Map();\nexport default defineHandler({ on: ${on}, run(event) { seen.set(event.type, (seen.get(event.type) ?? 0) + 1); } });\n`,
  );
  return dir;
}

/**
 * A project with one handler of its own on every given Clerk type, beside the
 * shipped mirror: with `steps` > 0 it runs that many no-op durable steps
 * (`ctx.step`), each stored when it ends; with 0 it does nothing. The two
 * side by side show what steps cost over a plain handler.
 */
export function makeStepsProject(types: readonly string[], root: string, steps: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-bench-steps-'));
  mkdirSync(join(dir, 'handlers'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(root, join(dir, 'node_modules', 'hookrun'), 'dir');
  const on = JSON.stringify([...new Set(types)].map((type) => `clerk:${type}`));
  const body = Array.from({ length: steps }, (_, i) => `await ctx.step('s${i}', () => ${i});`).join(' ');
  writeFileSync(
    join(dir, 'handlers', 'follow-up.js'),
    `import { defineHandler } from 'hookrun';\nexport default defineHandler({ on: ${on}, async run(event, ctx) { ${body} } });\n`,
  );
  return dir;
}
