import { randomBytes, randomUUID } from 'node:crypto';
import { AppError } from '../../errors.js';
import { bodyDigestOf, parseJsonObject, type Verifier } from '../delivery.js';
import { defineProvider } from '../provider.js';
import { samplePerson } from '../sample-events/ids.js';
import { hmac, matchesAnySecret } from './hmac.js';

/** The answer to a delivery without the signature header: from the verifier, and before the body is read. */
const MISSING_SIGNATURE = 'Missing X-Hub-Signature-256 header: set a secret on the GitHub webhook, the same as GITHUB_WEBHOOK_SECRET.';

const SIGNATURE = /^sha256=[0-9a-f]{64}$/;
/**
 * An event name as GitHub sends it (`push`, `pull_request`, `projects_v2_item`),
 * or one it adds later: any visible ASCII but `.` (which joins the action),
 * stored as given. GitHub does not redeliver a refused delivery, so a name is
 * never refused for its spelling.
 */
const EVENT_NAME = /^[\x21-\x2d\x2f-\x7e]{1,100}$/;
/** The payload's `action`: `opened`, or `repository_dispatch`'s caller-chosen event type (free text, up to 100 characters). */
const ACTION = /^[\x21-\x7e](?:[\x20-\x7e]{0,98}[\x21-\x7e])?$/;

/**
 * What the signed body of a known event always holds (`has`) and never does
 * (`lacks`), so an unsigned `X-GitHub-Event` cannot re-type it (an
 * `issue_comment` stored as `issues`). Events not listed are not checked:
 * their name is only the header's word.
 * https://docs.github.com/en/webhooks/webhook-events-and-payloads
 */
const EVENT_SHAPES: Record<string, { has: string[]; lacks?: string[] }> = {
  ping: { has: ['zen'] },
  push: { has: ['pusher'] },
  issues: { has: ['issue'], lacks: ['comment'] },
  issue_comment: { has: ['issue', 'comment'] },
  pull_request: { has: ['pull_request'], lacks: ['review', 'comment', 'thread'] },
  pull_request_review: { has: ['pull_request', 'review'] },
  pull_request_review_comment: { has: ['pull_request', 'comment'] },
  pull_request_review_thread: { has: ['pull_request', 'thread'] },
  release: { has: ['release'] },
  check_run: { has: ['check_run'] },
  check_suite: { has: ['check_suite'] },
  workflow_run: { has: ['workflow_run'] },
  workflow_job: { has: ['workflow_job'] },
};

function checkEventShape(event: string, value: Record<string, unknown>): void {
  const shape = EVENT_SHAPES[event];
  if (!shape) return;
  const missing = shape.has.find((field) => value[field] === undefined || value[field] === null);
  const extra = shape.lacks?.find((field) => value[field] !== undefined);
  if (missing || extra) {
    throw new AppError(
      'invalid_payload',
      `X-GitHub-Event says "${event}", but the signed body ${missing ? `has no "${missing}"` : `has a "${extra}"`}, so it is another event: the header is not signed; send GitHub's delivery unchanged.`,
    );
  }
}

/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`
 * under the webhook's secret, which covers the body only. The key is
 * `X-GitHub-Delivery` (a redelivery from GitHub's UI keeps it, so it is
 * answered `duplicate`), and only it: two genuine events can have the same
 * body (block, unblock, block of one user). The body's SHA-256 marks a
 * suspected replay instead: the same signed body under a new, unsigned
 * delivery id is stored, handled, and marked with the earlier event. The type
 * is `X-GitHub-Event` (checked against the body's shape for the events in
 * EVENT_SHAPES) plus the body's `action` (`issues.opened`). No timestamp is
 * signed: a retry is stopped by the delivery id (kept DEDUPE_RETENTION_DAYS).
 * https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
 */
export function createGithubVerifier(secrets: readonly string[]): Verifier {
  return ({ body, headers }) => {
    const signature = headers.get('x-hub-signature-256');
    if (!signature) throw new AppError('missing_signature', MISSING_SIGNATURE);
    if (!SIGNATURE.test(signature)) throw new AppError('invalid_signature', 'X-Hub-Signature-256 must look like "sha256=<64 hex digits>".');
    if (!matchesAnySecret(signature, secrets, (secret) => `sha256=${hmac('sha256', secret, body, 'hex')}`)) {
      throw new AppError(
        'invalid_signature',
        'X-Hub-Signature-256 does not match GITHUB_WEBHOOK_SECRET. Check the secret and that the body is forwarded unchanged.',
      );
    }
    const delivery = headers.get('x-github-delivery');
    const event = headers.get('x-github-event');
    if (!delivery || delivery.length > 255) throw new AppError('invalid_payload', 'A GitHub delivery needs an X-GitHub-Delivery header (1-255 characters).');
    if (!event || !EVENT_NAME.test(event))
      throw new AppError(
        'invalid_payload',
        'A GitHub delivery needs an X-GitHub-Event header naming its event ("push", "projects_v2_item"; 1-100 visible ASCII characters without "."): send GitHub\'s delivery unchanged.',
      );
    const { text, value } = parseJsonObject(body);
    checkEventShape(event, value);
    const action = typeof value.action === 'string' && ACTION.test(value.action) ? `.${value.action}` : '';
    return { key: delivery, type: `${event}${action}`, payloadJson: text, bodyDigest: bodyDigestOf(body) };
  };
}

const repository = (owner: string) => ({
  id: 1296269,
  name: 'hello-world',
  full_name: `${owner}/hello-world`,
  private: false,
  owner: { login: owner, id: 1, type: 'User' },
  html_url: `https://github.com/${owner}/hello-world`,
});

function buildGithubSample(type: string, nowMs: number): Record<string, unknown> {
  const login = samplePerson().firstName.toLowerCase();
  const sender = { login, id: 583231, type: 'User' };
  const at = new Date(nowMs).toISOString();
  if (type === 'ping')
    return {
      zen: 'Keep it logically awesome.',
      hook_id: 30,
      hook: { type: 'Repository', id: 30, active: true, events: ['push', 'issues', 'pull_request'], created_at: at, updated_at: at },
      repository: repository(login),
      sender,
    };
  if (type === 'push') {
    const after = randomBytes(20).toString('hex');
    return {
      ref: 'refs/heads/main',
      before: '0'.repeat(40),
      after,
      repository: repository(login),
      pusher: { name: login },
      sender,
      commits: [{ id: after, message: 'Fix the thing', timestamp: at, author: { name: login, username: login } }],
      head_commit: { id: after, message: 'Fix the thing', timestamp: at },
    };
  }
  const [name, action] = type.split('.') as [string, string];
  const number = 1347;
  const item = {
    id: 1,
    number,
    title: 'Found a bug',
    state: 'open',
    user: sender,
    created_at: at,
    updated_at: at,
    html_url: `https://github.com/${login}/hello-world/${name === 'issues' ? 'issues' : 'pull'}/${number}`,
  };
  return { action, [name === 'issues' ? 'issue' : 'pull_request']: item, repository: repository(login), sender };
}

/** GitHub on `/webhooks/github`, secret `GITHUB_WEBHOOK_SECRET`; content type application/json. */
export const githubProvider = defineProvider({
  title: 'GitHub',
  route: 'github',
  name: 'github',
  secretEnv: ['GITHUB_WEBHOOK_SECRET'],
  body: 'json',
  credentialHeaders: ['x-hub-signature-256'],
  missingCredentials: { code: 'missing_signature', message: MISSING_SIGNATURE },
  createVerifier: (setting) => createGithubVerifier(setting.values),
  sampleTypes: ['ping', 'push', 'issues.opened', 'pull_request.opened'],
  buildSample: buildGithubSample,
  envelope: (type) => (type.includes('.') ? { action: type.slice(type.indexOf('.') + 1) } : {}),
  sign: ({ body, secret, messageId, type }) => ({
    'x-hub-signature-256': `sha256=${hmac('sha256', secret, body, 'hex')}`,
    'x-github-delivery': messageId.startsWith('msg_') ? randomUUID() : messageId,
    'x-github-event': type.split('.')[0] || 'ping',
    'x-github-hook-id': '30',
  }),
  openapi: {
    summary: 'GitHub webhooks',
    description:
      "Secret GITHUB_WEBHOOK_SECRET (the webhook's \"Secret\"; content type application/json). Idempotency key: `X-GitHub-Delivery`. Type: `X-GitHub-Event` plus the payload's `action` (`issues.opened`). No timestamp is signed and the headers are not: only the delivery id makes a duplicate; the same body under a new id is stored and marked as a suspected replay of the earlier event (`sameBodyAs`, the metric hookrun_suspected_replays_total); the event name is checked against the body's shape for common events.",
    headers: [
      { name: 'X-Hub-Signature-256', description: '`sha256=<hex HMAC-SHA256 of the body>`', required: true },
      { name: 'X-GitHub-Delivery', description: 'delivery GUID: the idempotency key', required: true },
      { name: 'X-GitHub-Event', description: 'event name (`push`, `issues`, …)', required: true },
    ],
  },
});
