import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { projectFiles } from '../../src/cli/init-templates.js';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { dockerStages, stageRuns, targetInstructions } from '../helpers/dockerfile.js';
import { REPO_ROOT } from '../helpers/spawn-hookrun.js';

const run = promisify(execFile);

interface Container {
  args: string[];
  envFrom?: unknown[];
  env?: Array<{ name: string; value: string }>;
  readinessProbe?: { httpGet: { path: string; port: number } };
  livenessProbe?: { httpGet: { path: string; port: number } };
  ports?: Array<{ containerPort: number }>;
  resources?: { requests?: { cpu?: string; memory?: string }; limits?: { memory?: string } };
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; capabilities?: { drop?: string[] } };
  volumeMounts?: Array<{ name: string; mountPath: string }>;
}
interface PodSpec {
  terminationGracePeriodSeconds: number;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  containers: Container[];
  volumes?: Array<{ name: string; emptyDir?: object; persistentVolumeClaim?: { claimName: string } }>;
}
interface Manifest {
  kind: string;
  metadata: { name: string };
  spec: {
    replicas?: number;
    strategy?: { type: string };
    template?: { spec: PodSpec };
    ports?: Array<{ targetPort: number }>;
  };
}

/** The example's manifests, parsed. */
function readManifests(file: string): Manifest[] {
  return parseAllDocuments(readFileSync(join(REPO_ROOT, 'docs', 'examples', file), 'utf8')).map((d) => d.toJS() as Manifest);
}

/** A setting of the container in ms: its `env` entry, else hookrun's default (src/config/config.ts). */
function settingMs(container: Container, name: string, fallbackMs: number): number {
  const value = container.env?.find((e) => e.name === name)?.value;
  return value === undefined ? fallbackMs : Number(value);
}

/**
 * What every Deployment of the examples must have: a locked-down container,
 * resources, and a grace period longer than hookrun's own stop: the ready
 * grace (HTTP only) and SHUTDOWN_TIMEOUT_MS, which must itself outlast a
 * handler's time limit (30 s) and the 5 s a handler is waited for after it.
 */
function expectDeploymentHardened(deployment: Manifest): void {
  const pod = deployment.spec.template!.spec;
  const name = deployment.metadata.name;
  expect(pod.securityContext?.runAsNonRoot, name).toBe(true);
  expect(pod.securityContext?.runAsUser, `${name}: a numeric non-root user, which runAsNonRoot can check`).toBeGreaterThan(0);
  for (const container of pod.containers) {
    expect(container.securityContext, name).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(container.resources?.requests?.cpu && container.resources.requests.memory && container.resources.limits?.memory, name).toBeTruthy();
    // A read-only root: /tmp is an emptyDir.
    const tmp = container.volumeMounts?.find((m) => m.mountPath === '/tmp');
    expect(pod.volumes?.find((v) => v.name === tmp?.name)?.emptyDir, `${name}: /tmp on an emptyDir`).toBeDefined();
    const shutdownMs = settingMs(container, 'SHUTDOWN_TIMEOUT_MS', 8000);
    const graceMs = container.ports ? settingMs(container, 'SHUTDOWN_READY_GRACE_MS', 5000) : 0;
    expect(shutdownMs, `${name}: SHUTDOWN_TIMEOUT_MS outlasts a handler (30 s + 5 s)`).toBeGreaterThanOrEqual(35_000);
    expect(pod.terminationGracePeriodSeconds * 1000, `${name}: longer than hookrun's own stop`).toBeGreaterThan(graceMs + shutdownMs);
    if (container.ports) {
      expect(container.readinessProbe?.httpGet, name).toEqual({ path: '/ready', port: container.ports[0]!.containerPort });
      expect(container.livenessProbe?.httpGet, name).toEqual({ path: '/health', port: container.ports[0]!.containerPort });
      expect(graceMs, `${name}: the ready grace is on`).toBeGreaterThan(0);
    }
  }
}

// docs/examples/kubernetes.yaml, which docs/deploy.md points to: parsed, and each command it runs accepted by this build's CLI.
describe('the Kubernetes example in the docs', () => {
  const manifests = readManifests('kubernetes.yaml');
  const container = (name: string) => manifests.find((m) => m.metadata.name === name)!.spec.template!.spec.containers[0]!;
  beforeAll(() => ensureDistBuilt(), 120_000);

  it('receivers (start --no-worker) are ready on /ready and alive on /health; workers run `hookrun worker`; the Service reaches the receivers', () => {
    expect(manifests.map((m) => `${m.kind}/${m.metadata.name}`)).toEqual(['Deployment/hookrun-web', 'Deployment/hookrun-worker', 'Service/hookrun']);
    const web = container('hookrun-web');
    expect(web.args.slice(-2)).toEqual(['start', '--no-worker']);
    expect(web.readinessProbe?.httpGet).toEqual({ path: '/ready', port: 3002 });
    expect(web.livenessProbe?.httpGet).toEqual({ path: '/health', port: 3002 });
    expect(container('hookrun-worker').args.slice(-1)).toEqual(['worker']);
    expect(manifests[2]!.spec.ports![0]!.targetPort).toBe(web.ports![0]!.containerPort);
  });

  it('each Deployment runs locked down, with resources, and is given longer to stop than hookrun takes', () => {
    for (const m of manifests.filter((m) => m.kind === 'Deployment')) expectDeploymentHardened(m);
  });

  it("each container's command is one this build accepts (its --help exits 0 and names the switch used)", async () => {
    for (const name of ['hookrun-web', 'hookrun-worker']) {
      const [node, mainJs, ...args] = container(name).args;
      expect([node, mainJs]).toEqual(['node', 'node_modules/hookrun/dist/main.js']);
      const { stdout } = await run(process.execPath, [join(REPO_ROOT, 'dist', 'main.js'), args[0]!, '--help'], { timeout: 30_000 });
      for (const flag of args.slice(1)) expect(stdout).toContain(flag);
    }
  });
});

// docs/examples/kubernetes-embedded.yaml: PGlite in the pod, so one replica, replaced only once stopped, its data on a claim.
describe('the Kubernetes example with the embedded database', () => {
  const manifests = readManifests('kubernetes-embedded.yaml');

  it('runs one replica with strategy Recreate, the data dir on a PersistentVolumeClaim, no DATABASE_URL', () => {
    expect(manifests.map((m) => `${m.kind}/${m.metadata.name}`)).toEqual(['PersistentVolumeClaim/hookrun-data', 'Deployment/hookrun', 'Service/hookrun']);
    const deployment = manifests[1]!;
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy).toEqual({ type: 'Recreate' });
    const pod = deployment.spec.template!.spec;
    const container = pod.containers[0]!;
    expect(container.args.slice(-1)).toEqual(['start']);
    expect(container.env?.map((e) => e.name)).not.toContain('DATABASE_URL');
    const data = container.volumeMounts?.find((m) => m.mountPath === '/app/.data'); // the Dockerfile's WORKDIR and DATA_DIR
    expect(pod.volumes?.find((v) => v.name === data?.name)?.persistentVolumeClaim).toEqual({ claimName: 'hookrun-data' });
    expectDeploymentHardened(deployment);
  });
});

// The container files `hookrun init` writes: a supported Node, production dependencies only, a complete .dockerignore.
describe('the Dockerfile and .dockerignore hookrun init writes', () => {
  const files = projectFiles('my-hookrun', '^0.2.0');

  it('builds FROM a Node line still supported (not 20, past its end of life on 2026-04-30), one image for every stage, pinnable by digest', () => {
    const dockerfile = files.Dockerfile!;
    const image = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1];
    expect(image).toMatch(/^node:(\d+)-slim$/);
    expect(Number(/^node:(\d+)/.exec(image!)![1])).toBeGreaterThanOrEqual(22);
    // Every stage starts from NODE_IMAGE or from a stage before it.
    const stages = dockerStages(dockerfile);
    stages.forEach((stage, i) => expect(['${NODE_IMAGE}', ...stages.slice(0, i).map((s) => s.name)], stage.name).toContain(stage.from));
    expect(dockerfile).toContain('docker buildx imagetools inspect');
    expect(dockerfile).toMatch(/^RUN npm ci --omit=dev/m);
  });

  it('builds the embedded database by default, and a postgres target without PGlite, the types-only packages or a volume', () => {
    const dockerfile = files.Dockerfile!;
    const stages = dockerStages(dockerfile);
    expect(stages.map((s) => s.name)).toEqual(['deps', 'postgres-deps', 'runtime', 'postgres', 'embedded']);
    // The default target is the last stage: the embedded database, its data dir the node user's, on a volume.
    const embedded = targetInstructions(dockerfile, 'embedded');
    expect(embedded).toMatch(/^COPY --from=deps \/app\/node_modules \.\/node_modules$/m);
    expect(embedded).toMatch(/^USER node$/m);
    expect(embedded).toMatch(/^VOLUME \/app\/\.data$/m);
    // The postgres target: the pruned dependencies, the same ENV, HEALTHCHECK and CMD, not root, and nothing on disk to keep.
    const postgres = targetInstructions(dockerfile, 'postgres');
    expect(postgres).toMatch(/^COPY --from=postgres-deps \/app\/node_modules \.\/node_modules$/m);
    expect(postgres).toMatch(/^USER node$/m);
    expect(postgres).not.toMatch(/^VOLUME/m);
    expect(postgres).not.toContain('.data');
    for (const instruction of ['ENV', 'HEALTHCHECK', 'CMD']) expect(postgres, instruction).toMatch(new RegExp(`^${instruction} `, 'm'));
    // The prune: one RUN naming each package once, by path; never --omit=optional (tsx needs esbuild's binary, an optional dependency).
    const [prune, ...more] = stageRuns(dockerfile, 'postgres-deps');
    expect(more).toEqual([]);
    for (const name of ['@electric-sql/pglite', '@octokit/webhooks-types']) expect(prune!.split(name).length - 1, name).toBe(1);
    expect(dockerfile).not.toMatch(/^RUN .*--omit=optional/m);
    expect(dockerfile).toContain('docker build --target postgres');
    expect(files['compose.yaml']).toMatch(/^ {6}target: postgres$/m);
  });

  it('.dockerignore keeps history, local data, secrets and build leftovers out of the build context', () => {
    const ignored = files['.dockerignore']!.split('\n').filter(Boolean);
    for (const entry of ['.git', 'node_modules', '.data', '.env', '.env.*', '*.log', 'coverage', '.next']) expect(ignored).toContain(entry);
  });
});
