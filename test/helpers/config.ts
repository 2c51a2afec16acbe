import { loadConfig, type Config } from '../../src/config/config.js';

/** Test signing secrets: Stripe's are opaque strings, Svix/Clerk's are `whsec_` + base64. */
export const SECRETS = {
  payments: 'whsec_test_payments_secret',
  auth: 'whsec_' + Buffer.from('test-auth-secret-32-bytes-long!!').toString('base64'),
  database: 'db-bearer-secret-for-tests-32-characters',
  cron: 'cron-secret-for-tests-at-least-32-chars',
  admin: 'admin-token-for-tests-at-least-32-chars',
  github: 'github-webhook-secret-for-tests',
  shopify: 'shopify-client-secret-for-tests',
  resend: 'whsec_' + Buffer.from('test-resend-secret-32-bytes-long').toString('base64'),
  twilio: '7c4b1f9e2d3a8b6c5e0f1a2b3c4d5e6f',
  /** STRIPE_SECRET_KEY for the fake Stripe API (test/helpers/fake-stripe-api.ts). */
  stripe: 'sk_test_hookrun_fake_api_key',
} as const;

/** A config as `loadConfig` would build it from env, with test secrets and overrides. */
export function testConfig(env: Record<string, string | undefined> = {}): Config {
  return loadConfig(
    {
      PAYMENTS_WEBHOOK_SECRET: SECRETS.payments,
      AUTH_WEBHOOK_SECRET: SECRETS.auth,
      DATABASE_WEBHOOK_SECRET: SECRETS.database,
      GITHUB_WEBHOOK_SECRET: SECRETS.github,
      SHOPIFY_WEBHOOK_SECRET: SECRETS.shopify,
      RESEND_WEBHOOK_SECRET: SECRETS.resend,
      TWILIO_AUTH_TOKEN: SECRETS.twilio,
      CRON_SECRET: SECRETS.cron,
      ADMIN_TOKEN: SECRETS.admin,
      PLATFORM_CONFIG: '/nonexistent/platform.json',
      LOG_LEVEL: 'silent',
      ...env,
    },
    process.cwd(),
  );
}
