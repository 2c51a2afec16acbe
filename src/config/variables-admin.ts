/**
 * Who may sign in to the admin API, the console and the CLI's commands, with
 * which name and role (operators.ts reads them), in the order configuration.md
 * lists them; spread into ENV_VARIABLES (written out here so neither file imports the other).
 */
export const ADMIN_ACCESS_VARIABLES: ReadonlyArray<{ name: string; default: string; description: string; feature: string }> = [
  {
    name: 'ADMIN_TOKEN',
    default: 'unset → admin 503',
    feature: 'admin API and dashboard',
    description:
      'bearer token for `/api` and the `/admin` console; at least 32 characters. It signs in as the operator `admin` (may act); for several people, each with their own name and role, use `ADMIN_TOKENS`',
  },
  {
    name: 'ADMIN_TOKENS',
    default: 'unset',
    feature: 'admin API and dashboard',
    description:
      'named tokens, one per person: `name:role:token` separated by commas, e.g. `alice:operator:<token>,bob:viewer:<token>`. A `viewer` reads everything; an `operator` may also act (replay, pause, resume, acknowledge, resolve, run, backfill, reconcile, prune). Names are 1-32 letters, digits, `-` or `_`; each token at least 32 characters, with no comma; no name or token twice. The audit (`/admin/audit`, `GET /api/audit`) records each action under the name. Works beside `ADMIN_TOKEN`',
  },
  {
    name: 'HOOKRUN_ADMIN_TOKEN',
    default: 'unset → `ADMIN_TOKEN`',
    feature: 'CLI',
    description:
      "the token the CLI's commands sign in with, one of `ADMIN_TOKENS`' or `ADMIN_TOKEN`: against a running server's admin API, and against the database directly, so the audit names who ran them. Without any token, a command on the database directly acts as `local`",
  },
];
