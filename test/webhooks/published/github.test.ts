import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { sign } from '@octokit/webhooks-methods';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../../helpers/app.js';
import { SECRETS } from '../../helpers/config.js';
import { pgliteOnly, useTestDatabase } from '../../helpers/db.js';
import { deliverAll, problems, type PublishedDelivery } from './published.js';

/** @octokit/webhooks-examples: every event and action GitHub documents, for github.com and each GitHub Enterprise Server release. */
const EXAMPLES_DIR = dirname(createRequire(import.meta.url).resolve('@octokit/webhooks-examples/package.json'));

interface Definition {
  name: string;
  examples: Array<Record<string, unknown>>;
}

/** Every published example once (the GHES copies of a github.com example are the same bytes), with the host it is documented for. */
function publishedExamples(): Array<{ host: string; name: string; payload: Record<string, unknown> }> {
  const seen = new Set<string>();
  const examples: Array<{ host: string; name: string; payload: Record<string, unknown> }> = [];
  const hosts = readdirSync(EXAMPLES_DIR).filter((d) => d === 'api.github.com' || d.startsWith('ghes-'));
  for (const host of hosts.sort()) {
    const definitions = JSON.parse(readFileSync(join(EXAMPLES_DIR, host, 'index.json'), 'utf8')) as Definition[];
    for (const { name, examples: payloads } of definitions)
      for (const payload of payloads) {
        const body = JSON.stringify(payload);
        if (seen.has(body)) continue;
        seen.add(body);
        examples.push({ host, name, payload });
      }
  }
  return examples;
}

/** GitHub's documented type: the `X-GitHub-Event` name, plus `.action` when the payload has one. */
const documentedType = (name: string, payload: Record<string, unknown>) => (typeof payload.action === 'string' ? `${name}.${payload.action}` : name);

describe.each(pgliteOnly())('GitHub published examples on $name', (kind) => {
  const tdb = useTestDatabase(kind);
  const examples = publishedExamples();
  let deliveries: PublishedDelivery[];

  beforeAll(async () => {
    deliveries = await Promise.all(
      examples.map(async ({ host, name, payload }, i) => {
        const body = JSON.stringify(payload);
        const key = randomUUID();
        return {
          label: `${host} ${name} #${i}${typeof payload.action === 'string' ? ` (${payload.action})` : ''}`,
          route: 'github',
          body,
          key,
          type: documentedType(name, payload),
          headers: {
            'content-type': 'application/json',
            'user-agent': 'GitHub-Hookshot/044aadd',
            'x-hub-signature-256': await sign(SECRETS.github, body), // GitHub's own signing, from @octokit/webhooks-methods
            'x-github-delivery': key,
            'x-github-event': name,
            'x-github-hook-id': '30',
          },
        };
      }),
    );
  });

  it('covers every event GitHub documents, on github.com and GitHub Enterprise Server', () => {
    expect(examples.length).toBeGreaterThan(350);
    expect(new Set(examples.map((e) => e.name)).size).toBeGreaterThan(55);
    expect(examples.some((e) => e.host.startsWith('ghes-'))).toBe(true);
  });

  it('answers 2xx, stores each once as <X-GitHub-Event>[.<action>], and settles it processed or ignored', async () => {
    const t = createTestApp(tdb.db);
    const outcomes = await deliverAll(t, tdb.db, deliveries);
    expect(problems(outcomes)).toEqual([]);
  });
});
