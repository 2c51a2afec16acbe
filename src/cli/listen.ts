import { Option, type Command } from 'commander';
import { ConfigError } from '../errors.js';
import { EXIT_CODES, say, warn } from './output.js';
import { deliverLocally, isLoopbackUrl, relayLine, remoteApiBase, type RemoteEvent } from './relay.js';
import { setExitCode, loadCliConfig } from './io.js';

interface ListenFlags {
  from: string;
  token?: string;
  to?: string;
  source?: string;
  type?: string;
  allowRemoteTarget?: boolean;
}

const MAX_BACKOFF_MS = 30_000;

/** Split a server-sent-events byte stream into messages (`id`, `event`, `data`); comments are keep-alives. */
export async function* readServerSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<{ id?: string; event?: string; data: string }> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const message: { id?: string; event?: string; data: string } = { data: '' };
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':') || line === '') continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') data.push(value);
        else if (field === 'id') message.id = value;
        else if (field === 'event') message.event = value;
      }
      if (data.length > 0) yield { ...message, data: data.join('\n') };
    }
  }
}

/** The admin token for the remote: `--token`, else HOOKRUN_REMOTE_TOKEN. */
export function remoteToken(flag: string | undefined): string {
  const token = flag ?? loadCliConfig().remoteToken;
  if (!token) throw new ConfigError('No token for the remote hookrun: pass --token <its ADMIN_TOKEN> or set HOOKRUN_REMOTE_TOKEN.');
  return token;
}

/**
 * `hookrun listen --from https://api.example.com`: real events from your own
 * deployed hookrun, re-signed with your local secrets and delivered to the
 * local receiver, live; reconnects with backoff and resumes by id.
 */
export function registerListenCommand(program: Command): void {
  program
    .command('listen')
    .description("stream verified events from a deployed hookrun's admin API into this one, re-signed with the local secrets")
    .requiredOption('--from <url>', 'the deployed hookrun, e.g. https://api.example.com')
    .option('--token <token>', "the deployed hookrun's ADMIN_TOKEN (default: HOOKRUN_REMOTE_TOKEN)")
    .option('--to <url>', 'the local hookrun (default http://localhost:$PORT)')
    .addOption(new Option('--source <source>', "only this source: a shipped route (payments, auth, github, …) or a platform.json sender's route"))
    .option('--type <type>', 'only this event type')
    .option('--allow-remote-target', 'allow a --to that is not on this machine')
    .addHelpText(
      'after',
      '\nExample:\n  HOOKRUN_REMOTE_TOKEN=… hookrun listen --from https://api.example.com --source auth\n\nPayloads (which may hold personal data) reach this machine; secrets never do. Ctrl-C stops.',
    )
    .action(async (flags: ListenFlags, command: Command) => {
      const config = loadCliConfig();
      const to = flags.to ?? `http://localhost:${config.port}`;
      if (!isLoopbackUrl(to) && !flags.allowRemoteTarget) {
        command.error(`--to ${to} is not on this machine; listen forwards real payloads, so pass --allow-remote-target if you mean it.`, {
          exitCode: EXIT_CODES.usage,
        });
      }
      const token = remoteToken(flags.token);
      const query = new URLSearchParams({ ...(flags.source ? { source: flags.source } : {}), ...(flags.type ? { type: flags.type } : {}) });
      const streamUrl = `${remoteApiBase(flags.from)}/events/stream${query.size > 0 ? `?${query}` : ''}`;
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      process.once('SIGTERM', () => stop.abort());
      let lastId: string | undefined;
      let failures = 0;
      while (!stop.signal.aborted) {
        try {
          const response = await fetch(streamUrl, {
            headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...(lastId ? { 'last-event-id': lastId } : {}) },
            signal: stop.signal,
          });
          if (response.status === 401 || response.status === 503) {
            const text = await response.text();
            warn(`hookrun: ${streamUrl} answered ${response.status}: ${text.slice(0, 300)}\n`);
            setExitCode(response.status === 401 ? EXIT_CODES.config : EXIT_CODES.failure);
            if (response.status === 401) return;
            throw new Error(`answered ${response.status}`);
          }
          if (!response.ok || !response.body) throw new Error(`answered ${response.status}`);
          failures = 0;
          for await (const message of readServerSentEvents(response.body)) {
            if (message.event === 'ready') {
              warn(`listening to ${streamUrl}${lastId ? ` from event ${lastId}` : ''}; delivering to ${to}\n`);
              continue;
            }
            if (message.event !== 'event') continue;
            const event = JSON.parse(message.data) as RemoteEvent;
            const answer = await deliverLocally(event, config, to).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
            say(`${relayLine(event, answer)}\n`);
            // Not delivered (local server down or 5xx): resume from here after a reconnect, so it is not skipped.
            if (answer instanceof Error || answer.status >= 500) throw new Error(`the local hookrun at ${to} did not take event ${event.id}`);
            lastId = message.id ?? lastId;
          }
          throw new Error('the stream ended');
        } catch (error) {
          if (stop.signal.aborted) break;
          failures++;
          const delayMs = Math.min(MAX_BACKOFF_MS, 500 * 2 ** Math.min(failures - 1, 6));
          warn(`hookrun: stream interrupted (${(error as Error).message}); reconnecting in ${delayMs} ms${lastId ? ` from event ${lastId}` : ''}\n`);
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, delayMs);
            stop.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
          });
        }
      }
      warn('stopped\n');
    });
}
