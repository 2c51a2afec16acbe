import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { Logger } from '../log.js';

/** What `hookrun dev` watches and runs. */
export interface ReloaderOptions {
  /** Where people and providers send requests (PORT/HOST). */
  port: number;
  host: string | undefined;
  /** Paths whose changes restart the server: folders (the source tree, the migrations) and files (platform.json, .env), which may not exist yet. */
  watch: string[];
  /** The command that runs one `hookrun start` (same node flags, so tsx keeps loading the source); `--dev-url <public url>` is added so it prints the port people call. */
  command: { file: string; args: string[] };
  /** The child's environment: without what .env set, so each child reads .env afresh (config's `environmentWithoutDotEnv()`). */
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** How long a request may wait for a restarting server before it is answered 503. Default 30 s. */
  waitMs?: number;
  /** Quiet time after a change before restarting (editors write in bursts). Default 250 ms. */
  debounceMs?: number;
}

/** A running dev server: the public port, and how to stop everything. */
export interface Reloader {
  url: string;
  /** Restarts so far (tests). */
  readonly restarts: number;
  /** Requests open to the child now: each ends when its client leaves (a closed tab ends its event stream upstream too). */
  readonly upstreams: number;
  close(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer().once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/**
 * The headers the child gets. A caller from another machine is named in
 * `Forwarded`, as a proxy names it: the child hears every request from this
 * front over loopback, and its loopback-only routes (`/metrics` without
 * `METRICS_TOKEN`, `/cron` without `CRON_SECRET`) refuse what came through a
 * proxy.
 */
function forwardedHeaders(req: IncomingMessage): IncomingMessage['headers'] {
  const address = req.socket.remoteAddress ?? '';
  if (LOOPBACK.has(address)) return req.headers;
  const forwarded = `for="${address.includes(':') ? `[${address}]` : address}"`;
  return { ...req.headers, forwarded: req.headers.forwarded ? `${req.headers.forwarded}, ${forwarded}` : forwarded };
}

/**
 * `hookrun dev`: this process owns the public port and runs `hookrun start`
 * as a child on a private one. When a watched file changes it stops the child
 * gracefully (in-flight requests finish, claims are released), starts a new
 * one, and holds requests that arrive meanwhile until it is ready, so a new
 * job file or a handler edit takes effect without a restart by hand and
 * without a dropped request.
 */
export async function startReloader(options: ReloaderOptions): Promise<Reloader> {
  const { log } = options;
  const waitMs = options.waitMs ?? 30_000;
  let child: { process: ChildProcess; port: number } | undefined;
  let ready: Promise<number | undefined> = Promise.resolve(undefined);
  let restarts = 0;
  let upstreams = 0;
  let closing = false;

  let publicUrl = '';
  const spawnChild = async (): Promise<number | undefined> => {
    const port = await freePort();
    const proc = spawn(process.execPath, [...process.execArgv, options.command.file, ...options.command.args, '--dev-url', publicUrl], {
      // The child hears only this front, over loopback; a caller from another machine reaches it named in Forwarded (forwardedHeaders), which /cron refuses.
      env: { ...options.env, PORT: String(port), HOST: '127.0.0.1', CRON_LOCAL_CALLERS: 'allow' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child = { process: proc, port };
    const exited = new Promise<undefined>((resolve) => proc.once('exit', () => resolve(undefined)));
    const deadline = Date.now() + 60_000;
    for (;;) {
      const up = await fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (up) return port;
      if (proc.exitCode !== null || Date.now() > deadline) {
        log.error('hookrun dev: the server did not start (see the error above); fix it and save again');
        return exited;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const stopChild = async () => {
    const current = child;
    child = undefined;
    if (!current || current.process.exitCode !== null) return;
    const exited = new Promise((resolve) => current.process.once('exit', resolve));
    current.process.kill('SIGTERM');
    const timer = setTimeout(() => current.process.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };

  const restart = () => {
    if (closing) return;
    restarts += 1;
    log.info('hookrun dev: a watched file changed; restarting the server (requests wait)');
    ready = ready.then(() => stopChild()).then(() => spawnChild());
  };

  /** One try at the child; `retry` when it refused the connection before answering (it was stopping). */
  const sendOnce = (port: number, req: IncomingMessage, body: Buffer, res: ServerResponse) =>
    new Promise<'done' | 'retry'>((resolve) => {
      const upstream = request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: forwardedHeaders(req) }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.once('end', () => resolve('done'));
        answer.once('error', () => resolve('done'));
      });
      upstreams += 1;
      upstream.once('close', () => (upstreams -= 1));
      // The client left (a tab closed, a page navigated away from its event stream): end the request upstream too, or the child keeps serving nobody.
      res.once('close', () => {
        if (res.writableFinished) return;
        upstream.destroy();
        resolve('done');
      });
      upstream.once('error', (error: NodeJS.ErrnoException) => {
        if (!res.headersSent && (error.code === 'ECONNREFUSED' || error.code === 'ECONNRESET')) return resolve('retry');
        if (!res.headersSent)
          res
            .writeHead(502, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: { code: 'unavailable', message: `hookrun dev: ${error.message}` } }));
        else res.destroy();
        resolve('done');
      });
      upstream.end(body);
    });

  const forward = async (req: IncomingMessage, res: ServerResponse) => {
    // Dev only: the body is read whole first, so a request that meets a restart can be sent again.
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const deadline = Date.now() + waitMs;
    for (;;) {
      const port = await Promise.race([ready, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), Math.max(0, deadline - Date.now())))]);
      if (port === undefined || Date.now() > deadline) {
        return void res
          .writeHead(503, { 'content-type': 'application/json' })
          .end(
            '{"error":{"code":"unavailable","message":"hookrun dev: the server is not running (a start-up error, shown in the terminal). Fix it and save; the provider retries."}}',
          );
      }
      if ((await sendOnce(port, req, body, res)) === 'done') return;
      await new Promise((resolve) => setTimeout(resolve, 20)); // the old child is stopping: wait for the new one
    }
  };

  const server: Server = createServer((req, res) => void forward(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', resolve);
  });
  const address = server.address() as { address: string; port: number };
  const url = `http://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`;
  publicUrl = ['0.0.0.0', '::'].includes(address.address) ? `http://localhost:${address.port}` : url;
  ready = spawnChild();
  await ready;

  let timer: NodeJS.Timeout | undefined;
  const changed = () => {
    clearTimeout(timer);
    timer = setTimeout(restart, options.debounceMs ?? 250);
  };
  const watchers: FSWatcher[] = [];
  const isFolder = (path: string) => existsSync(path) && statSync(path).isDirectory();
  for (const path of options.watch) {
    if (isFolder(path)) {
      watchers.push(watch(path, { recursive: true }, changed));
      continue;
    }
    // A file, or a folder not made yet: watch its parent, so a file created later (.env) or replaced by an editor's rename is still seen.
    if (!existsSync(dirname(path))) continue;
    const name = basename(path);
    let inside = false;
    const parent = watch(dirname(path), (_event, file) => {
      if (file !== null && file !== name) return;
      changed();
      // A folder made while dev runs (a project's first migrations/): what is saved in it from now on reloads too.
      if (!inside && !closing && isFolder(path)) {
        inside = true;
        watchers.push(watch(path, { recursive: true }, changed));
      }
    });
    watchers.push(parent);
  }
  return {
    url,
    get restarts() {
      return restarts;
    },
    get upstreams() {
      return upstreams;
    },
    async close() {
      closing = true;
      clearTimeout(timer);
      for (const w of watchers) w.close();
      await ready.catch(() => undefined);
      await stopChild();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
