import { run } from '../../src/cli/run.js';
import { recordCapture } from './secret-scan.js';

/** What a CLI run printed and how it ended, as a spawned `hookrun` would report it. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Run `hookrun <args>` in this test process (src/cli/run.ts) with exactly
 * `env` as its environment and `cwd` as its directory: what a spawned
 * `node dist/main.js` does, without the 1.5 s a new Node process costs.
 * What it printed goes to the secret scan, as a spawned CLI's output does.
 */
export async function runCliInProcess(args: string[], env: Record<string, string | undefined>, cwd: string): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const ownEnv: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) ownEnv[name] = value;
  const outcome = await run(args, {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    env: ownEnv,
    cwd,
    stderrIsTTY: false,
  });
  recordCapture(`hookrun ${args.join(' ')}`, stdout + stderr);
  return { code: outcome.code, stdout, stderr };
}
