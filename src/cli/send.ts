import { readFileSync } from 'node:fs';
import { Argument, type Command } from 'commander';
import { SOURCES, type Source } from '../webhooks/providers/index.js';
import { SAMPLE_TYPES } from '../webhooks/samples.js';
import { EXIT_CODES, printJson, say, warn } from './output.js';
import { buildStory } from './story.js';
import { setExitCode, loadCliConfig } from './io.js';

interface SendFlags {
  data?: string;
  url?: string;
  json?: boolean;
  dryRun?: boolean;
  curl?: boolean;
  story?: boolean;
}

const SEND_TIMEOUT_MS = 10_000;

/** `--data`: inline JSON (starts with `{`), a file path, or `-` for stdin. */
function readOverrides(command: Command, data: string | undefined): unknown {
  if (data === undefined) return undefined;
  const inline = data.trimStart().startsWith('{');
  let text = data;
  if (!inline) {
    try {
      text = readFileSync(data === '-' ? 0 : data, 'utf8');
    } catch (error) {
      command.error(
        `--data ${data}: cannot be read (${(error as Error).message}). Pass inline JSON ('{"data":{"id":"user_123"}}'), a file path, or - for stdin.`,
        { exitCode: EXIT_CODES.usage },
      );
    }
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    command.error(`--data ${inline ? '(inline JSON)' : data}: is not valid JSON (${(error as Error).message}).`, { exitCode: EXIT_CODES.usage });
  }
}

/** `--url http://host:port` posts to that server's receiver; a URL with a path is used as is. */
export function targetUrl(source: Source, port: number, url: string | undefined): string {
  if (!url) return `http://localhost:${port}/webhooks/${source}`;
  const parsed = new URL(url);
  if (parsed.pathname === '/' || parsed.pathname === '') parsed.pathname = `/webhooks/${source}`;
  return parsed.toString();
}

/** `hookrun send`: the way to test a webhook on a laptop, signed exactly as the provider would sign it. */
export function registerSendCommand(program: Command): void {
  program
    .command('send')
    .description('build a realistic sample event, sign it with the configured secret as the provider would, and POST it')
    .addArgument(new Argument('[source]', 'which receiver').choices(SOURCES))
    .argument('[type]', 'event type, e.g. user.created, checkout.session.completed, INSERT')
    .option('--data <json|file>', 'JSON deep-merged into the sample event: inline, a file, or "-" for stdin, e.g. \'{"data":{"id":"user_123"}}\'')
    .option(
      '--story',
      "instead of one event: one customer's life, linked by id (user.created → checkout.session.completed → customer.subscription.created → invoice.paid)",
    )
    .option('--url <url>', 'server URL (default http://localhost:$PORT; a URL with a path is used as is)')
    .option('--json', 'print the request summary and answer as JSON')
    .option('--dry-run', 'print the signed request instead of sending it (the body as the exact signed string)')
    .option('--curl', 'print a signed curl command that works when pasted, instead of sending')
    .addHelpText(
      'after',
      `\nTypes with a full sample:\n${SOURCES.map((s) => `  ${s}: ${SAMPLE_TYPES[s].join(', ')}`).join('\n')}\n` +
        '\nExit codes: 0 the server answered 2xx, 1 it answered otherwise or could not be reached, 2 usage, 78 missing secret.\n' +
        '\nExamples:\n  hookrun send auth user.created && hookrun events list --source auth\n  hookrun send --story && hookrun mirror customers',
    )
    .action(async (source: Source | undefined, type: string | undefined, flags: SendFlags, command: Command) => {
      if (flags.story ? source !== undefined || flags.data !== undefined : source === undefined || type === undefined) {
        command.error(
          flags.story
            ? '--story sends its own four events: give no source, type or --data.'
            : 'Give a source and a type, e.g. hookrun send auth user.created (or --story).',
          { exitCode: EXIT_CODES.usage },
        );
      }
      const config = loadCliConfig();
      const [{ buildSample, encodeSample, normalizeSampleType, signSample, UnknownSampleTypeError }, { providerFor }] = await Promise.all([
        import('../webhooks/samples.js'),
        import('../webhooks/providers/index.js'),
      ]);
      if (flags.story && (config.providers.payments !== 'stripe' || config.providers.auth !== 'clerk')) {
        command.error('--story is a Clerk user and their Stripe purchase: it needs PAYMENTS_PROVIDER=stripe and AUTH_PROVIDER=clerk (the defaults).', {
          exitCode: EXIT_CODES.usage,
        });
      }
      let events: Array<{ source: Source; event: Record<string, unknown> }>;
      try {
        // The route's configured provider builds the sample (PAYMENTS_PROVIDER=paddle: a Paddle notification).
        events = flags.story
          ? buildStory(buildSample)
          : [{ source: source!, event: buildSample(source!, type!, readOverrides(command, flags.data), Date.now(), providerFor(config, source!)) }];
      } catch (error) {
        if (error instanceof UnknownSampleTypeError) command.error(error.message, { exitCode: EXIT_CODES.usage });
        throw error;
      }
      for (const { source: to, event } of events) {
        const provider = providerFor(config, to);
        const body = encodeSample(to, event, provider);
        const url = targetUrl(to, config.port, flags.url);
        // A sender whose type travels in a header (GitHub, Shopify) signs it from the type asked for: its body has no type.
        const sentType = type === undefined ? String(event.type) : normalizeSampleType(to, type, provider);
        const headers = signSample(to, body, config, { url, type: sentType });
        if (flags.curl) say(`${curlCommand(url, headers, body, config.secrets[to]?.envName)}\n`);
        else if (flags.dryRun) printJson({ method: 'POST', url, headers: redactHeaders(headers), body });
        else if (!(await post(url, { source: to, type: sentType, event }, headers, body, flags.json === true))) return;
      }
    });
}

/** POST one signed event and print the answer; false when nothing answered (the exit code is set). */
async function post(
  url: string,
  { source, type, event }: { source: Source; type: string; event: Record<string, unknown> },
  headers: Record<string, string>,
  body: string,
  json: boolean,
): Promise<boolean> {
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(SEND_TIMEOUT_MS) });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    warn(`hookrun: nothing answered at ${url} (${cause}). Start the server with \`npm start\`, or pass --url.\n`);
    setExitCode(EXIT_CODES.failure);
    return false;
  }
  const text = await response.text();
  let answer: unknown = text;
  try {
    answer = JSON.parse(text);
  } catch {
    // not JSON: print as text
  }
  if (json) printJson({ url, source, type, status: response.status, answer, event });
  else say(`POST ${url}  ${source} ${type}\n${response.status} ${typeof answer === 'string' ? answer : JSON.stringify(answer)}\n`);
  if (!response.ok) setExitCode(EXIT_CODES.failure);
  return true;
}

/** A dry run shows which headers are sent without printing a bearer secret (signatures are not secrets). */
function redactHeaders(headers: Record<string, string>): Record<string, string> {
  const out = { ...headers };
  if (out.authorization) out.authorization = 'Bearer [DATABASE_WEBHOOK_SECRET]';
  return out;
}

/** Quote for a POSIX shell: one single-quoted word, whatever the text holds. */
const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * A curl command that sends exactly the signed bytes. A bearer secret is not
 * printed: the command reads it from the environment, loading `.env` first
 * when there is one, so it still works when pasted into a fresh shell.
 */
export function curlCommand(url: string, headers: Record<string, string>, body: string, secretEnvName: string | undefined): string {
  const lines = [`curl -sS -i ${shellQuote(url)}`];
  let needsEnv = false;
  for (const [name, value] of Object.entries(headers)) {
    if (name === 'authorization') {
      needsEnv = true;
      lines.push(`-H "Authorization: Bearer $${secretEnvName ?? 'DATABASE_WEBHOOK_SECRET'}"`);
    } else lines.push(`-H ${shellQuote(`${name}: ${value}`)}`);
  }
  lines.push(`--data-binary ${shellQuote(body)}`);
  const curl = lines.join(' \\\n  ');
  return needsEnv ? `( [ -f .env ] && set -a && . ./.env && set +a; ${curl} )` : curl;
}
