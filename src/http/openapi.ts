import { Hono } from 'hono';
import { HOOKRUN_VERSION } from '../version.js';
import { choiceEnvName, defaultProvider, isChoosable, PROVIDERS_BY_ROUTE, type Source, SOURCES } from '../webhooks/providers/index.js';
import type { ProviderDefinition } from '../webhooks/provider.js';
import { renderDocsPage } from './docs-page.js';
import { adminPaths } from './openapi-admin.js';
import { consolePaths } from './openapi-console.js';
import { errorRef, errors, header, json, path, type Json } from './openapi-parts.js';

const received = json('Stored (or a duplicate of a stored delivery); the provider may stop retrying.', {
  type: 'object',
  required: ['received', 'id', 'duplicate'],
  properties: { received: { type: 'boolean' }, id: { type: 'integer' }, duplicate: { type: 'boolean' } },
});

const nullableNumber = { type: ['number', 'null'] };
const changesReadySchema: Json = {
  type: 'object',
  description:
    'Present when CHANGES_DATABASE_URL is set. consuming: this instance streams the slot; standby: another does; disconnected: retrying (last_error_code says why; the message is in the log and GET /api/changes).',
  properties: {
    state: { enum: ['starting', 'consuming', 'standby', 'disconnected', 'stopped'] },
    slot: { type: 'string' },
    publication: { type: 'string' },
    lag_bytes: nullableNumber,
    lag_seconds: nullableNumber,
    retained_wal_bytes: nullableNumber,
    changes_per_second: { type: 'number' },
    last_error_code: { enum: ['source_misconfigured', 'source_auth_failed', 'source_unreachable', 'source_error', 'capture_failed'] },
  },
};

const receiverErrors = errors({
  401: ['unauthorized'],
  429: ['too_many_requests'],
  400: ['missing_signature', 'invalid_signature', 'timestamp_out_of_tolerance', 'invalid_payload'],
  405: ['method_not_allowed'],
  408: ['request_timeout'],
  413: ['payload_too_large'],
  415: ['unsupported_media_type'],
  503: ['not_configured', 'unavailable'],
});

function receiver(summary: string, description: string, headers: Json[], body: 'json' | 'form'): Json {
  return {
    post: {
      tags: ['webhooks'],
      summary,
      description: `${description} The body is verified over its raw bytes, committed to the inbox, then answered. Unhandled event types are stored as \`ignored\` and answered 200.`,
      parameters: headers,
      requestBody: {
        required: true,
        content: { [body === 'form' ? 'application/x-www-form-urlencoded' : 'application/json']: { schema: { type: 'object' } } },
      },
      responses: { 200: received, ...receiverErrors },
    },
  };
}

/** For a route several providers serve: how `<ROUTE>_PROVIDER` switches it to each of the others. */
function choiceNote(source: Source): string {
  if (!isChoosable(source)) return '';
  const others = Object.values<ProviderDefinition>(PROVIDERS_BY_ROUTE[source]).slice(1);
  return ` With ${choiceEnvName(source)}=${others.map((p) => p.name).join('|')} the route verifies that provider instead: ${others.map((p) => p.openapi.description).join(' ')}`;
}

/** One entry per receiver, from each provider's definition (providers/index.ts), then platform.json's custom ones. */
function receiverPaths(custom: readonly ProviderDefinition[]): Record<string, Json> {
  const entries = [
    ...SOURCES.map((source) => ({ route: source as string, provider: defaultProvider(source), choice: choiceNote(source) })),
    ...custom.map((provider) => ({ route: provider.route, provider, choice: '' })),
  ];
  return Object.fromEntries(
    entries.map(({ route, provider: { openapi, body }, choice }) => {
      return [
        `/webhooks/${route}`,
        receiver(
          openapi.summary,
          `${openapi.description}${choice}`,
          openapi.headers.map((h) => header(h.name, h.description, h.required)),
          body,
        ),
      ];
    }),
  );
}

function cronRoute(method: 'get' | 'post', note: string): Json {
  return {
    tags: ['cron'],
    summary: `Run the job once (${note})`,
    security: [{ cronSecret: [] }],
    parameters: [
      path('job', 'the job file name in src/cron/jobs/, e.g. keep-alive'),
      header('Authorization', '`Bearer <CRON_SECRET>`; without CRON_SECRET the route is closed, unless CRON_LOCAL_CALLERS=allow (then loopback callers only)'),
    ],
    responses: {
      200: {
        description:
          'The job ran; body `OK`. A scheduled delivery (`User-Agent: vercel-cron/…`) whose tick already has its run answers `OK` with `X-Hookrun-Run: duplicate` and does not run it again',
        content: { 'text/plain': { schema: { type: 'string', example: 'OK' } } },
      },
      401: { description: 'Missing or wrong bearer token (`unauthorized`)', content: { 'application/json': { schema: errorRef } } },
      403: {
        description:
          'CRON_SECRET is not set and CRON_LOCAL_CALLERS is not `allow`; or, with it, the caller is not on this machine, came through a proxy or is a web page (`forbidden`)',
        content: { 'application/json': { schema: errorRef } },
      },
      404: {
        description: 'No such job (`not_found`); the job names are listed only to a CRON_SECRET holder',
        content: { 'application/json': { schema: errorRef } },
      },
      409: { description: 'The job is already running; the call is recorded as `skipped` (`conflict`)', content: { 'application/json': { schema: errorRef } } },
      429: {
        description: 'Too many wrong bearers from this address or from everyone (`too_many_requests`, `Retry-After`); a correct one is always accepted',
        content: { 'application/json': { schema: errorRef } },
      },
      500: {
        description: 'The job failed; body `Job failed (run <id>); …` (the error itself is in the run history, not the answer)',
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
    },
  };
}

/**
 * The OpenAPI 3.1 description of every route hookrun serves, with request
 * headers, answers and error codes (the error contract of docs/design.md). Hand-written
 * beside the routes; a test checks it lists every route the app registers.
 */
export function buildOpenApiDocument(version: string = HOOKRUN_VERSION, custom: readonly ProviderDefinition[] = []): Json {
  return {
    openapi: '3.1.0',
    info: { title: 'hookrun', version, description: 'Verified, durable, exactly-once webhooks and scheduled jobs. Errors are `{"error":{"code","message"}}`.' },
    paths: {
      '/health': {
        get: { tags: ['ops'], summary: 'The process is up', responses: { 200: json('Up', { type: 'object', properties: { status: { const: 'ok' } } }) } },
      },
      '/ready': {
        get: {
          tags: ['ops'],
          summary: 'The database answers (and, with CHANGES_DATABASE_URL, how the change capture stands)',
          responses: {
            200: json('Ready', {
              type: 'object',
              properties: { status: { const: 'ready' }, database: { enum: ['pglite', 'postgres'] }, changes: changesReadySchema },
            }),
            ...errors({ 503: ['unavailable'] }),
          },
        },
      },
      '/metrics': {
        get: {
          tags: ['ops'],
          summary:
            'Prometheus metrics (text format 0.0.4), rendered at most once a second; `Bearer <METRICS_TOKEN>`, or without METRICS_TOKEN only for loopback callers that no proxy relayed',
          security: [{ metricsToken: [] }, {}],
          responses: {
            200: { description: 'Metrics', content: { 'text/plain': {} } },
            ...errors({ 401: ['unauthorized'], 403: ['forbidden'], 429: ['too_many_requests'] }),
          },
        },
      },
      '/openapi.json': { get: { tags: ['ops'], summary: 'This document', responses: { 200: json('OpenAPI 3.1') } } },
      '/docs': {
        get: {
          tags: ['ops'],
          summary: 'This document as a page (no script, no external asset)',
          responses: { 200: { description: 'HTML', content: { 'text/html': {} } } },
        },
      },
      ...receiverPaths(custom),
      '/cron/{job}': { get: cronRoute('get', 'what Vercel Cron sends'), post: cronRoute('post', 'the documented method') },
      ...adminPaths(),
      ...consolePaths(),
    },
    components: {
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: { error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } } },
        },
      },
      securitySchemes: {
        adminToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'ADMIN_TOKEN, or a named token of ADMIN_TOKENS (a viewer may read; an operator may also act)',
        },
        cronSecret: { type: 'http', scheme: 'bearer', description: 'CRON_SECRET' },
        metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN (when set)' },
      },
    },
  };
}

/**
 * `GET /openapi.json` and `GET /docs` (the same document as a page): built
 * once, on the first request for either. Built at start-up it cost ~20-25 ms
 * of every start (the admin schemas' zod → JSON Schema), before `/ready`.
 */
export function createOpenApiRoute(version?: string, custom: readonly ProviderDefinition[] = []): Hono {
  let built: { document: Json; page: string } | undefined;
  const build = () => {
    if (!built) {
      const document = buildOpenApiDocument(version, custom);
      built = { document, page: renderDocsPage(document) };
    }
    return built;
  };
  return new Hono()
    .get('/openapi.json', (c) => c.json(build().document))
    .get('/docs', (c) => {
      c.header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
      return c.html(build().page);
    });
}
