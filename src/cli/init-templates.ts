import { randomBytes } from 'node:crypto';

/** The files `hookrun init` writes, by path in the new project, for a project named `name` depending on hookrun as `hookrunSpec`. */
export function projectFiles(name: string, hookrunSpec: string): Record<string, string> {
  return {
    'package.json': `${JSON.stringify(
      {
        name,
        private: true,
        type: 'module',
        scripts: { dev: 'hookrun dev', start: 'exec hookrun start', test: 'tsc --noEmit' },
        engines: { node: '>=20.19' },
        dependencies: { hookrun: hookrunSpec },
        devDependencies: { '@clerk/backend': '^3.25.0', '@types/node': '^20.19.0', typescript: '^5.9.0' },
      },
      null,
      2,
    )}\n`,
    'platform.json': `${JSON.stringify({ crons: [{ path: '/cron/keep-alive', schedule: '0 1 * * *' }] }, null, 2)}\n`,
    'tsconfig.json': `${JSON.stringify(
      {
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
        },
        include: ['jobs', 'handlers'],
      },
      null,
      2,
    )}\n`,
    'jobs/keep-alive.ts': `import { defineJob } from 'hookrun';

/**
 * /cron/keep-alive, daily at 01:00 UTC (platform.json): one query, so a
 * database that pauses when idle (a free Supabase or Neon project) stays awake.
 */
export default defineJob({
  description: 'Run one query so the database sees activity.',
  timeoutMs: 30_000,
  async run({ db, log }) {
    const [row] = await db.query<{ now: Date }>('SELECT now() AS now');
    log.info({ now: row?.now }, 'database is awake');
  },
});
`,
    'handlers/welcome-email.ts': `import { defineHandler } from 'hookrun';

/**
 * Runs once for each Clerk user.created event, after it is stored; retried
 * on its own with backoff if it throws. \`event\` is Clerk's own type.
 */
export default defineHandler({
  on: ['clerk:user.created'],
  async run(event, ctx) {
    const email = event.data.email_addresses[0]?.email_address;
    ctx.log.info({ userId: event.data.id, email }, 'new user: send the welcome email here');
  },
});
`,
    '.env.example': ENV_EXAMPLE,
    '.env': localEnv(),
    '.gitignore': 'node_modules/\n.data/\n.env\n',
    Dockerfile: DOCKERFILE,
    'compose.yaml': COMPOSE,
    '.dockerignore': DOCKERIGNORE,
    'README.md': readme(name),
  };
}

const ENV_EXAMPLE = `# Settings hookrun reads (copy to .env for your laptop; real environment variables win).
# Webhook signing secrets, as each provider's dashboard shows them:
PAYMENTS_WEBHOOK_SECRET=   # Stripe: whsec_… (the endpoint's signing secret, or what \`stripe listen\` prints)
AUTH_WEBHOOK_SECRET=       # Clerk: whsec_… (Webhooks → your endpoint → Signing Secret)
DATABASE_WEBHOOK_SECRET=   # Supabase Database Webhooks: the bearer you send in the Authorization header
# Who may call /cron/<job> (Vercel Cron sends it as a bearer) and the admin API.
# Without CRON_SECRET, /cron is closed (hookrun dev opens it to this machine):
CRON_SECRET=
ADMIN_TOKEN=
# Unset: the embedded database in .data/. Set: your PostgreSQL (hookrun's tables go in schema "hookrun").
DATABASE_URL=
`;

/** Random local secrets, so \`npm run dev\` and \`npx hookrun send\` work at once; never used in production. */
function localEnv(): string {
  const token = () => randomBytes(32).toString('base64url');
  return `# Local development only (made by hookrun init): random secrets for this laptop.
PAYMENTS_WEBHOOK_SECRET=whsec_${token()}
AUTH_WEBHOOK_SECRET=whsec_${randomBytes(32).toString('base64')}
DATABASE_WEBHOOK_SECRET=${token()}
CRON_SECRET=${token()}
ADMIN_TOKEN=${token()}
`;
}

const DOCKERFILE = `# hookrun in a container: node, your handlers and jobs, and the embedded database on a volume.
# Build: docker build -t my-hookrun .  Run: docker run -p 3002:3002 --env-file .env my-hookrun
# With DATABASE_URL only, build the PostgreSQL target: no PGlite (~27 MB), no volume:
#   docker build --target postgres -t my-hookrun .
# With PostgreSQL beside it: docker compose up (compose.yaml builds the postgres target).

# Node 24, a long-term-support line (security fixes until April 2028). The tag follows its patch
# releases; to pin the exact image, build with its digest:
#   docker buildx imagetools inspect node:24-slim   (prints Digest: sha256:…)
#   docker build --build-arg NODE_IMAGE=node:24-slim@sha256:… -t my-hookrun .
ARG NODE_IMAGE=node:24-slim

# Dependencies in a stage of their own: the image keeps node_modules, not npm's cache;
# devDependencies (TypeScript, @clerk/backend's types) stay out.
FROM \${NODE_IMAGE} AS deps
WORKDIR /app
COPY package*.json ./
RUN npm ci --omit=dev --no-audit --no-fund

# The postgres target's dependencies: without the embedded database and without the packages
# that are types only (tsc reads them, node never does). npm cannot omit one package
# (--omit=optional would also drop esbuild's binary, which tsx needs), so they go by path.
FROM deps AS postgres-deps
RUN for package in @electric-sql/pglite @octokit/webhooks-types; do rm -rf "node_modules/$package" "node_modules/hookrun/node_modules/$package"; done

# What both targets run.
FROM \${NODE_IMAGE} AS runtime
WORKDIR /app
ENV NODE_ENV=production PORT=3002 HOST=0.0.0.0
EXPOSE 3002
HEALTHCHECK --interval=10s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# No shell: node is PID 1, so SIGTERM reaches hookrun, which finishes what runs and stops.
CMD ["node", "node_modules/hookrun/dist/main.js", "start"]

# docker build --target postgres: needs DATABASE_URL (without it, start exits 78 and says so).
# It keeps nothing on disk, so it declares no volume; not root: the node user (uid 1000) owns nothing.
FROM runtime AS postgres
COPY --from=postgres-deps /app/node_modules ./node_modules
COPY . .
USER node

# The default target: the embedded database when DATABASE_URL is unset, its data on a volume.
FROM runtime AS embedded
COPY --from=deps /app/node_modules ./node_modules
COPY . .
RUN mkdir -p .data && chown node:node .data
# Not root: the node user (uid 1000) owns only the data dir.
USER node
VOLUME /app/.data
`;

/** What \`docker build\` leaves out of the context: history, local data and secrets, build and test leftovers. */
const DOCKERIGNORE = `.git
node_modules
.data
.env
.env.*
*.log
coverage
.next
`;

const COMPOSE = `# hookrun and the PostgreSQL it keeps its tables in: docker compose up
# (secrets from .env; DATABASE_URL here points at the postgres service).
services:
  postgres:
    image: postgres:16
    environment:
      POSTGRES_USER: hookrun
      POSTGRES_PASSWORD: hookrun
      POSTGRES_DB: hookrun
    volumes:
      - postgres-data:/var/lib/postgresql/data
    healthcheck:
      test: ["CMD", "pg_isready", "-U", "hookrun", "-d", "hookrun"]
      interval: 5s
      timeout: 3s
      retries: 10
  hookrun:
    # The Dockerfile's postgres target: DATABASE_URL is set, so no embedded database and no volume.
    build:
      context: .
      target: postgres
    env_file: .env
    environment:
      DATABASE_URL: postgres://hookrun:hookrun@postgres:5432/hookrun
    ports:
      - "3002:3002"
    depends_on:
      postgres:
        condition: service_healthy
    # hookrun's own stop: /ready fails for SHUTDOWN_READY_GRACE_MS (5 s) while it still serves, then it waits
    # up to SHUTDOWN_TIMEOUT_MS (8 s) for what runs; give it that and more.
    stop_grace_period: 20s
    restart: unless-stopped
volumes:
  postgres-data:
`;

function readme(name: string): string {
  return `# ${name}

The API app beside your product, on [hookrun](https://www.npmjs.com/package/hookrun):
verified webhooks processed exactly once, and scheduled jobs.

\`\`\`sh
npm install
npm run dev        # http://localhost:3002, reloads on save
\`\`\`

- \`handlers/<name>.ts\`: \`export default defineHandler({ on: ['stripe:invoice.paid'], run(event, ctx) { … } })\`.
  \`event\` has the provider's own type; several handlers may take one event, each retried on its own.
- \`jobs/<name>.ts\`: \`export default defineJob({ run(ctx) { … } })\` is \`/cron/<name>\`; schedule it in \`platform.json\`.
  \`ctx.db\` runs SQL (\`query\`, \`transaction\`); \`env: ['SLACK_TOKEN']\` gives \`ctx.env.SLACK_TOKEN\`, checked set at start-up.
- Try it: \`npx hookrun send auth user.created\` (a signed Clerk event), then \`npx hookrun events list\`.
- \`npm test\` type-checks your handlers against the providers' types.
- Upgrading hookrun is \`npm install hookrun@latest\`; your files stay yours.
`;
}
