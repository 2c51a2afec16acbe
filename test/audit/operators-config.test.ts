import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { ADMIN_TOKENS, OPERATORS } from './operators-app.js';

const strong = 'x'.repeat(32);

describe('ADMIN_TOKENS: named tokens with a role each', () => {
  it('reads each name, role and token, with ADMIN_TOKEN as the operator "admin"', () => {
    const config = loadConfig({ ADMIN_TOKENS, ADMIN_TOKEN: strong, HOOKRUN_ADMIN_TOKEN: OPERATORS.bob }, process.cwd());
    expect(config.operators).toEqual([
      { name: 'alice', role: 'operator', token: OPERATORS.alice },
      { name: 'bob', role: 'viewer', token: OPERATORS.bob },
      { name: 'admin', role: 'operator', token: strong },
    ]);
    expect(config.cliToken).toBe(OPERATORS.bob);
    expect(loadConfig({ ADMIN_TOKEN: strong }, process.cwd()).cliToken).toBe(strong);
    expect(loadConfig({}, process.cwd()).operators).toEqual([]);
  });

  it.each([
    [`alice:operator:${'a'.repeat(31)}`, /ADMIN_TOKENS entry 1 \(alice\): the token is shorter than 32 characters/],
    [`alice:admin:${strong}`, /the role "admin" must be viewer \(reads everything\) or operator \(may act\)/],
    [`alice:${strong}`, /ADMIN_TOKENS entry 1 is not name:role:token/],
    [`al ice:viewer:${strong}`, /the name "al ice" must be 1-32 letters, digits/],
    [`alice:viewer:${strong},alice:operator:${'y'.repeat(32)}`, /ADMIN_TOKENS names "alice" twice/],
    [`alice:viewer:${strong},bob:operator:${strong}`, /gives bob a token another entry \(or ADMIN_TOKEN\) has/],
  ])('refuses %s, saying why and never showing the token', (value, message) => {
    let error: Error | undefined;
    try {
      loadConfig({ ADMIN_TOKENS: value }, process.cwd());
    } catch (caught) {
      error = caught as Error;
    }
    expect(error?.message).toMatch(message);
    expect(error?.message).not.toContain(strong);
  });

  it('refuses an entry named "admin" beside ADMIN_TOKEN', () => {
    expect(() => loadConfig({ ADMIN_TOKENS: `admin:viewer:${strong}`, ADMIN_TOKEN: 'z'.repeat(32) }, process.cwd())).toThrow(/ADMIN_TOKEN signs in as "admin"/);
  });
});
