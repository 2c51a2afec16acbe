/**
 * The senders' API keys and bases gap repair uses (senders.ts reads them), in the order configuration.md lists them;
 * spread into ENV_VARIABLES (each entry an `EnvVariable`, written out here so neither file imports the other).
 */
export const SENDER_API_VARIABLES: ReadonlyArray<{ name: string; default: string; description: string; feature: string }> = [
  {
    name: 'GITHUB_TOKEN',
    default: 'unset',
    feature: 'gap repair',
    description:
      "a GitHub token that may read and redeliver the webhook's deliveries (fine-grained: Webhooks read and write on the repository; classic: `admin:repo_hook`, or `admin:org_hook` for an organization webhook): `hookrun reconcile github` works",
  },
  {
    name: 'GITHUB_HOOK',
    default: 'unset',
    feature: 'gap repair',
    description:
      'the webhook whose deliveries `hookrun reconcile github` repairs: `owner/repo/<hook id>`, or `org/<organization>/<hook id>` for an organization webhook (the id is in its settings URL)',
  },
  {
    name: 'GITHUB_API_BASE',
    default: 'unset → `https://api.github.com`',
    feature: 'gap repair',
    description:
      'where GitHub API calls go: GitHub Enterprise Server (`https://ghe.example.com/api/v3`) or a local server in tests; `http://` only to this machine',
  },
  {
    name: 'PADDLE_API_KEY',
    default: 'unset',
    feature: 'gap repair',
    description:
      'a Paddle Billing API key (read access to events): `hookrun reconcile paddle` stores the events the inbox misses, as `/webhooks/payments` with `PAYMENTS_PROVIDER=paddle` would',
  },
  {
    name: 'PADDLE_API_BASE',
    default: 'unset → `https://api.paddle.com`',
    feature: 'gap repair',
    description:
      'where Paddle API calls go (`https://sandbox-api.paddle.com` for the sandbox) (tests point it at a local server); `http://` only to this machine',
  },
  {
    name: 'WORKOS_API_KEY',
    default: 'unset',
    feature: 'gap repair',
    description:
      'a WorkOS secret key (`sk_…`): `hookrun reconcile workos` stores the events the inbox misses, as `/webhooks/auth` with `AUTH_PROVIDER=workos` would',
  },
  {
    name: 'WORKOS_API_BASE',
    default: 'unset → `https://api.workos.com`',
    feature: 'gap repair',
    description: 'where WorkOS API calls go (tests point it at a local server); `http://` only to this machine',
  },
  {
    name: 'CLERK_SECRET_KEY',
    default: 'unset',
    feature: 'gap repair',
    description:
      'a Clerk secret key (`sk_…`): `hookrun reconcile clerk` lists users and organizations and stores those changed since `--since` as `user.updated` / `organization.updated` events for the Clerk mirror',
  },
  {
    name: 'CLERK_API_BASE',
    default: 'unset → `https://api.clerk.com`',
    feature: 'gap repair',
    description: 'where Clerk Backend API calls go (tests point it at a local server); `http://` only to this machine',
  },
];
