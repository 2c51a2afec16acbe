import { ConfigError } from '../errors.js';

/**
 * The settings a project's handler or job names in `env: [...]`, from the
 * environment hookrun started with: only those, so a file sees no secret it
 * did not ask for. A missing one stops start-up naming the file (`where`)
 * and each setting to set.
 */
export function readNamedSettings(
  where: string,
  names: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Readonly<Record<string, string>> {
  const missing = names.filter((name) => !env[name]);
  if (missing.length > 0) throw new ConfigError(`${where}: needs ${missing.join(', ')}; set ${missing.length > 1 ? 'them' : 'it'} in the environment or .env.`);
  return Object.freeze(Object.fromEntries(names.map((name) => [name, env[name]!])));
}
