import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENV_VARIABLES } from '../../src/config/variables.js';
import { PROVIDERS } from '../../src/webhooks/providers/index.js';
import { renderConfigurationPage } from '../../scripts/config-docs.js';

const ROOT = join(import.meta.dirname, '..', '..');

describe('docs/configuration.md', () => {
  it('is what `npm run docs:config` writes from the config definitions (run it after changing them)', () => {
    expect(readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8')).toBe(renderConfigurationPage());
  });

  it('describes every variable config reads (a new one needs its entry in src/config/variables.ts)', () => {
    const source = ['src/config/config.ts', 'src/config/values.ts', 'src/config/senders.ts'].map((file) => readFileSync(join(ROOT, file), 'utf8')).join('\n');
    const read = new Set([...source.matchAll(/env\.([A-Z][A-Z0-9_]+)|\(env, '([A-Z][A-Z0-9_]+)'/g)].map((m) => (m[1] ?? m[2])!));
    const described = new Set([...ENV_VARIABLES.map((v) => v.name), ...PROVIDERS.flatMap((p) => p.secretEnv)]);
    expect([...read].filter((name) => !described.has(name))).toEqual([]);
    expect(read.size).toBeGreaterThan(30);
  });
});
