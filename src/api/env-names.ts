const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

/**
 * Check an `env` list as `defineHandler` and `defineJob` take it: names of
 * environment variables (UPPER_SNAKE_CASE). Their presence is checked when
 * the project loads, naming the file; here only their shape, so a typo
 * throws where it was written.
 */
export function readEnvNames(env: unknown, caller: 'defineHandler' | 'defineJob'): readonly string[] {
  const names = env ?? [];
  if (!Array.isArray(names) || names.some((name) => typeof name !== 'string' || !ENV_NAME.test(name))) {
    throw new TypeError(`${caller}: "env" must list environment variable names (UPPER_SNAKE_CASE)`);
  }
  return Object.freeze([...(names as string[])]);
}
