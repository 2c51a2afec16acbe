// Import rules for `npm run lint` (depcruise): the layout docs/architecture.md describes, checked. Paths are
// matched from the repository root; the provider rules match a provider as src/webhooks/providers/<provider>.ts
// or src/webhooks/providers/<provider>/….
const PROVIDER_MAY_REACH = '^src/(webhooks/|errors[.]ts$|secure-compare[.]ts$)';
const LEAVES = '^src/(errors|clock|backoff|secure-compare|deadline|version)[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-cycle', severity: 'error', comment: 'No import cycle in src/.', from: { path: '^src/' }, to: { circular: true } },
    {
      name: 'resolvable',
      severity: 'error',
      comment: 'Every import in src/ resolves (so the other rules see every edge).',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
    {
      name: 'leaves-import-nothing-local',
      severity: 'error',
      comment: 'The leaf modules import nothing local.',
      from: { path: LEAVES },
      to: { dependencyTypes: ['local'] },
    },
    {
      name: 'time-is-a-leaf-folder',
      severity: 'error',
      comment: 'The duration grammar and the date reader (src/time/) import nothing local outside their folder.',
      from: { path: '^src/time/' },
      to: { dependencyTypes: ['local'], pathNot: '^src/time/' },
    },
    {
      name: 'providers-below-config',
      severity: 'error',
      comment: 'A provider never reaches config (config imports the providers), and reaches only src/webhooks/, errors.ts and secure-compare.ts.',
      from: { path: '^src/webhooks/providers/' },
      to: { path: '^src/', pathNot: PROVIDER_MAY_REACH, reachable: true },
    },
    {
      name: 'config-reads-values-only',
      severity: 'error',
      comment:
        'config/config.ts builds Config from the environment: it imports the value readers (the project folder, .env and the operators among them), platform.json, errors and the provider list, nothing that runs.',
      from: { path: '^src/config/config[.]ts$' },
      to: {
        path: '^src/',
        pathNot:
          '^src/errors[.]ts$|^src/config/(values|secrets|senders|observability|operators|platform|platform-entries|variables|database-connection|project-dir|dot-env)[.]ts$|^src/webhooks/provider(s/index)?[.]ts$',
      },
    },
    {
      name: 'config-values-are-leaves',
      severity: 'error',
      comment: "The value readers and platform.json parsing import only errors.ts (and, as a type, the custom sender's scheme).",
      from: { path: '^src/config/(values|platform|platform-entries|variables(-senders|-observability|-admin)?)[.]ts$|^src/nearest-key[.]ts$' },
      to: {
        path: '^src/',
        pathNot:
          '^src/(errors|nearest-key)[.]ts$|^src/config/(platform-entries|variables(-senders|-observability|-admin)?)[.]ts$|^src/webhooks/providers/custom[.]ts$',
      },
    },
    {
      name: 'config-senders-reads-values-only',
      severity: 'error',
      comment:
        'The sender API settings (config/senders.ts) and the alert and telemetry settings (config/observability.ts) import only the value readers and errors.ts.',
      from: { path: '^src/config/(senders|observability)[.]ts$' },
      to: { path: '^src/', pathNot: '^src/errors[.]ts$|^src/config/values[.]ts$' },
    },
    {
      name: 'config-values-type-only-scheme',
      severity: 'error',
      comment: "The custom sender's scheme reaches the value readers as a type only (nothing of the provider runs in config).",
      from: { path: '^src/config/(values|platform|platform-entries|variables)[.]ts$|^src/nearest-key[.]ts$' },
      to: { path: '^src/webhooks/providers/custom[.]ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'providers-not-receive',
      severity: 'error',
      comment: 'Providers are what receive, verifiers and samples build on, never the reverse.',
      from: { path: '^src/webhooks/providers/' },
      to: { path: '^src/webhooks/(receive|verifiers|samples)[.]ts$', reachable: true },
    },
    {
      name: 'api-stays-public',
      severity: 'error',
      comment:
        'src/api/ (exported from src/index.ts for projects) imports only src/api/ and the pure nearest-key.ts (its "did you mean"): never the engine (service assembly, http, db, inbox).',
      from: { path: '^src/api/' },
      to: { path: '^src/', pathNot: '^src/api/|^src/nearest-key[.]ts$' },
    },
    {
      name: 'index-is-the-api',
      severity: 'error',
      comment: "src/index.ts (the package's entry, dist/index.d.ts) re-exports only src/api/, so no engine type reaches a project's types.",
      from: { path: '^src/index[.]ts$' },
      to: { path: '^src/', pathNot: '^src/api/' },
    },
    {
      name: 'src-not-tests',
      severity: 'error',
      comment: 'test/, bench/ and scripts/ may import src/, never the reverse.',
      from: { path: '^src/' },
      to: { path: '^(test|bench|scripts)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'types', 'default'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
