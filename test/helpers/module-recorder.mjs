// Preloaded with `node --import` (NODE_OPTIONS) into a spawned hookrun: records every module the process loads,
// ES modules through a resolve hook (it runs on the loader's thread and posts each URL back) and CommonJS ones from
// require's cache, and writes them to $MODULE_RECORDER_OUT when the process exits.
import { writeFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { isMainThread, MessageChannel } from 'node:worker_threads';

if (isMainThread && process.env.MODULE_RECORDER_OUT) {
  const out = process.env.MODULE_RECORDER_OUT;
  const loaded = new Set();
  const { port1, port2 } = new MessageChannel();
  port1.on('message', (url) => loaded.add(url));
  port1.unref();
  const hooks = `let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) { const result = await next(specifier, context); port.postMessage(result.url); return result; }`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`, { data: { port: port2 }, transferList: [port2] });
  const require = createRequire(import.meta.url);
  process.on('exit', () => writeFileSync(out, JSON.stringify([...loaded, ...Object.keys(require.cache)])));
}
