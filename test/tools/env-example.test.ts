import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/config.js';
import { SOURCES } from '../../src/webhooks/providers/index.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { createApp } from '../../src/http/app.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { CHOOSABLE_SOURCES, choiceEnvName, PROVIDERS, PROVIDERS_BY_ROUTE } from '../../src/webhooks/providers/index.js';
import { SAMPLE_TYPES, buildSample, encodeSample, signSample } from '../../src/webhooks/samples.js';
import { createVerifiers } from '../../src/webhooks/verifiers.js';
import { createPgliteDatabase } from '../helpers/db.js';
import { REPO_ROOT } from '../helpers/spawn-hookrun.js';

const text = readFileSync(join(REPO_ROOT, '.env.example'), 'utf8');
const values = parseEnv(text) as Record<string, string>;

/** `.env.example` follows the provider list: `cp .env.example .env` makes `hookrun send <source>` work for every source. */
describe('.env.example', () => {
  it('sets a secret for every route `hookrun send` offers, and each signed sample is accepted with it', async () => {
    const config = loadConfig({ ...values, PLATFORM_CONFIG: '/nonexistent/platform.json', LOG_LEVEL: 'silent' }, REPO_ROOT);
    expect(SOURCES.filter((source) => !config.secrets[source])).toEqual([]);
    const { db, close } = await createPgliteDatabase();
    try {
      const clock = new ManualClock(Date.now());
      const app = createApp({ config, db, writer: new EventWriter(db), verifiers: createVerifiers(config), clock, log: silentLogger, metrics: new Metrics() });
      for (const source of SOURCES) {
        const type = SAMPLE_TYPES[source][0]!;
        const body = encodeSample(source, buildSample(source, type, undefined, clock.now()));
        const headers = signSample(source, body, config, { nowMs: clock.now(), type, url: `http://localhost/webhooks/${source}` });
        const res = await app.request(`/webhooks/${source}`, { method: 'POST', body, headers });
        expect(res.status, `${source} ${type}: ${await res.text()}`).toBe(200);
      }
    } finally {
      await close();
    }
  });

  it("names every provider's secret, and each route's provider switch with its choices", () => {
    const missing = PROVIDERS.flatMap((provider) => provider.secretEnv.slice(0, 1)).filter((name) => !text.includes(name));
    expect(missing).toEqual([]);
    for (const route of CHOOSABLE_SOURCES) {
      expect(text).toContain(choiceEnvName(route));
      for (const name of Object.keys(PROVIDERS_BY_ROUTE[route])) expect(text, `${choiceEnvName(route)} choice ${name}`).toContain(name);
    }
  });
});
