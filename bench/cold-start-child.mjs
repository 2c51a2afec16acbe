// One cold start of the mounted route, in a fresh node process (bench/cold-start.ts spawns it): import dist/next/route.js
// as `hookrun/next` resolves, build the route, POST two signed Stripe events through it; writes its timings to $COLD_OUT (JSON).
// With COLD_COUNT_MODULES=1 it records each module file loaded (a resolve hook on the loader's thread, plus require's
// cache) and writes the files loaded by each phase instead: the hook slows loading, so timings come from runs without it.
import { createHmac } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';

const counting = process.env.COLD_COUNT_MODULES === '1';
const loaded = new Set();
let port1;
if (counting) {
  const channel = new MessageChannel();
  port1 = channel.port1;
  port1.unref();
  const hooks = `let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) { const result = await next(specifier, context); port.postMessage(result.url); return result; }`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`, { data: { port: channel.port2 }, transferList: [channel.port2] });
}
const require = createRequire(import.meta.url);
/** The module files loaded so far (file: URLs and CommonJS paths). */
function modulesSoFar() {
  for (let message; (message = receiveMessageOnPort(port1));) loaded.add(message.message);
  for (const path of Object.keys(require.cache)) loaded.add(path);
  return [...loaded].filter((m) => !m.startsWith('node:') && !m.startsWith('data:')).map((m) => (m.startsWith('file:') ? new URL(m).pathname : m));
}

const { COLD_ROUTE, COLD_PROJECT, COLD_BODIES, COLD_OUT, PAYMENTS_WEBHOOK_SECRET: secret } = process.env;
const bodies = JSON.parse(readFileSync(COLD_BODIES, 'utf8'));

function signed(body) {
  const t = Math.floor(Date.now() / 1000);
  const v1 = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  return new Request('http://localhost:3000/api/webhooks/payments', {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': `t=${t},v1=${v1}` },
    body,
  });
}
const context = { params: Promise.resolve({ hookrun: ['webhooks', 'payments'] }) };

const ms = (from) => performance.now() - from;
const cpu = (from) => {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
};
const phases = {};
const figures = {};
const step = async (name, run) => {
  const wall = performance.now();
  const cpuAt = process.cpuUsage();
  const result = await run();
  figures[`${name}Ms`] = ms(wall);
  figures[`${name}CpuMs`] = cpu(cpuAt);
  if (counting) phases[name] = modulesSoFar();
  return result;
};

let tasks = [];
const after = (task) => void tasks.push(task());
const settle = async () => {
  const pending = tasks;
  tasks = [];
  await Promise.all(pending);
};

const { createNextRoute } = await step('import', () => import(COLD_ROUTE));
const route = createNextRoute({ project: COLD_PROJECT, after });
const first = await step('first', () => route.POST(signed(bodies[0]), context));
if (first.status !== 200) throw new Error(`first POST answered ${first.status}: ${await first.text()}`);
await step('firstProcessed', settle);
const second = await step('second', () => route.POST(signed(bodies[1]), context));
if (second.status !== 200) throw new Error(`second POST answered ${second.status}: ${await second.text()}`);
await step('secondProcessed', settle);
writeFileSync(COLD_OUT, JSON.stringify(counting ? phases : figures)); // not stdout, where the log writes too
process.exit(0);
