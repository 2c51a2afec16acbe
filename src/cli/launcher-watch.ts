/** How often a server that npm started checks that the process which started it is still there. */
const LAUNCHER_CHECK_MS = 1_000;

/**
 * Whether npm started this process: `npm start` / `npm run` and `npx` /
 * `npm exec` set npm_lifecycle_event in the environment of what they run.
 */
export function startedByNpm(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.npm_lifecycle_event);
}

/**
 * Calls `stop` once the process that started this one has exited, checked
 * every second; returns the function that ends the watch. npm runs a script
 * or `npx hookrun` through `sh -c`, and dash (the sh of Debian, Ubuntu and
 * node:*-slim images) does not exec the command: on SIGTERM npm passes the
 * signal to that shell only, the shell dies without passing it on, npm exits,
 * and hookrun would serve on as an orphan. Only for a process npm started:
 * one started any other way (`nohup … &`, a script that backgrounds it)
 * keeps running when its parent leaves, as it always has.
 */
export function onLauncherExit(stop: () => void): () => void {
  const launcher = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === launcher) return;
    clearInterval(timer);
    stop();
  }, LAUNCHER_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
