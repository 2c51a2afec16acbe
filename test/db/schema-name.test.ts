import { describe, expect, it } from 'vitest';
import { readSchema } from '../../src/config/values.js';
import { ConfigError } from '../../src/errors.js';
import { schemaRewrite } from '../../src/db/schema-name.js';

describe('HOOKRUN_SCHEMA: the rewrite of the hookrun qualifier', () => {
  const rewrite = schemaRewrite('acme_hooks');

  it('rewrites the qualifier, bare or quoted as drizzle-kit writes it, wherever a table is named', () => {
    expect(rewrite('SELECT e.id FROM hookrun.webhook_events e JOIN hookrun.event_attempts a ON a.event_id = e.id')).toBe(
      'SELECT e.id FROM "acme_hooks".webhook_events e JOIN "acme_hooks".event_attempts a ON a.event_id = e.id',
    );
    expect(rewrite('pg_typeof(NULL::hookrun.cron_runs), (hookrun.users)')).toBe('pg_typeof(NULL::"acme_hooks".cron_runs), ("acme_hooks".users)');
    expect(rewrite('CREATE SCHEMA "hookrun";')).toBe('CREATE SCHEMA "acme_hooks";');
    expect(rewrite('REFERENCES "hookrun"."webhook_events"("id")')).toBe('REFERENCES "acme_hooks"."webhook_events"("id")');
    expect(rewrite('INSERT INTO hookrun.x SELECT 1;\nUPDATE\thookrun.y')).toBe('INSERT INTO "acme_hooks".x SELECT 1;\nUPDATE\t"acme_hooks".y');
  });

  it('touches nothing else: the NOTIFY channel, string literals, longer names, a column named hookrun', () => {
    const untouched = [
      "SELECT pg_notify('hookrun_events', '')",
      'LISTEN hookrun_events',
      "VALUES ('hookrun', $1, 'ready.probe', '{}'::jsonb)",
      "SELECT 'hookrun.webhook_events'::regclass",
      'SELECT "hookrun.webhook_events" FROM t',
      'SELECT myhookrun.t, hookrun_x.t, x.hookrun.t, $hookrun.t FROM a',
      'SELECT t.hookrun FROM t WHERE hookrun = 1',
      'SELECT hookrun . t', // not a qualifier hookrun's SQL writes
    ];
    for (const text of untouched) expect(rewrite(text)).toBe(text);
  });

  it('the default schema costs nothing: the text comes back as it was', () => {
    const text = 'SELECT 1 FROM hookrun.webhook_events';
    expect(schemaRewrite()(text)).toBe(text);
    expect(schemaRewrite('hookrun')(text)).toBe(text);
  });

  it('remembers each text: the second call returns the same string', () => {
    const text = `SELECT 1 FROM hookrun.pages WHERE id = $1 -- ${Math.random()}`;
    expect(rewrite(text)).toBe(rewrite(text));
  });
});

describe('HOOKRUN_SCHEMA: the setting', () => {
  it('defaults to hookrun and takes a plain lower-case identifier', () => {
    expect(readSchema({})).toBe('hookrun');
    expect(readSchema({ HOOKRUN_SCHEMA: '' })).toBe('hookrun');
    expect(readSchema({ HOOKRUN_SCHEMA: 'acme_hooks2' })).toBe('acme_hooks2');
  });

  it('refuses anything else with a message that says what to use', () => {
    for (const bad of ['Hooks', 'hooks-1', '1hooks', 'a"b', 'a.b', 'public', 'pg_hooks', 'information_schema', 'x'.repeat(64), 'hooks; DROP TABLE users']) {
      expect(() => readSchema({ HOOKRUN_SCHEMA: bad }), bad).toThrow(ConfigError);
    }
    expect(() => readSchema({ HOOKRUN_SCHEMA: 'Hooks' })).toThrow(/HOOKRUN_SCHEMA="Hooks" is not valid: use a lower-case name/);
  });
});
