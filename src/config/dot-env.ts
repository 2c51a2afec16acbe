import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';

/** Read `.env` from the working directory into the environment, as Next.js does, so the server and the CLI in another terminal share secrets. Values already in the environment win. */
export function loadDotEnvFile(cwd: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): void {
  const path = resolve(cwd, '.env');
  if (!existsSync(path)) return;
  const before = new Set(Object.keys(env));
  if (env === process.env) process.loadEnvFile(path);
  else for (const [name, value] of Object.entries(parseEnv(readFileSync(path, 'utf8')))) if (!before.has(name)) env[name] = value;
  const added = fromDotEnv.get(env) ?? fromDotEnv.set(env, new Set()).get(env)!;
  for (const name of Object.keys(env)) if (!before.has(name)) added.add(name);
}

const fromDotEnv = new WeakMap<NodeJS.ProcessEnv, Set<string>>();

/** The environment as it was before `.env` was read: what `hookrun dev` hands each restart, which reads `.env` afresh. */
export function environmentWithoutDotEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !fromDotEnv.get(env)?.has(name)));
}
