import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withHookrun } from '../../src/next/with-hookrun.js';

const ROUTE_KEY = '/api/\\[...hookrun\\]';

describe('withHookrun (next.config)', () => {
  it("keeps hookrun out of the bundle and traces the project folder and hookrun's migrations for the route, keyed by the route escaped", () => {
    const config = withHookrun({ output: 'standalone' as const });
    expect(config.output).toBe('standalone');
    expect(config.serverExternalPackages).toEqual(['hookrun']);
    const includes = config.outputFileTracingIncludes[ROUTE_KEY]!;
    expect(Object.keys(config.outputFileTracingIncludes)).toEqual([ROUTE_KEY]);
    expect(includes[0]).toBe('./hookrun/**/*');
    // Relative to the app (the working directory): here the checkout itself is hookrun's package folder.
    const migrations = includes[1]!;
    expect(migrations).toMatch(/drizzle\/\*\*\/\*$/);
    expect(existsSync(join(process.cwd(), migrations.replace(/\*\*\/\*$/, ''), 'meta', '_journal.json'))).toBe(true);
  });

  it('merges into what the config already sets, without repeating an entry', () => {
    const config = withHookrun({
      serverExternalPackages: ['sharp', 'hookrun'],
      outputFileTracingIncludes: { '/blog/**': ['./posts/**/*'], [ROUTE_KEY]: ['./extra/*.json'] },
      reactStrictMode: true,
    });
    expect(config.reactStrictMode).toBe(true);
    expect(config.serverExternalPackages).toEqual(['sharp', 'hookrun']);
    expect(config.outputFileTracingIncludes['/blog/**']).toEqual(['./posts/**/*']);
    expect(config.outputFileTracingIncludes[ROUTE_KEY]!.slice(0, 2)).toEqual(['./extra/*.json', './hookrun/**/*']);
  });

  it('takes another project folder and route, and a config function of the phase', async () => {
    const make = withHookrun((phase: string) => ({ distDir: phase }), { project: './backend/hookrun/', route: '/hooks/[...all]' });
    const config = await make('phase-production-build', { defaultConfig: {} });
    expect(config.distDir).toBe('phase-production-build');
    expect(config.outputFileTracingIncludes['/hooks/\\[...all\\]']![0]).toBe('./backend/hookrun/**/*');
  });
});
