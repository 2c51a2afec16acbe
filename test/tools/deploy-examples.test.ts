import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { REPO_ROOT } from '../helpers/spawn-hookrun.js';

const run = promisify(execFile);

interface Container {
  args: string[];
  envFrom?: unknown[];
  readinessProbe?: { httpGet: { path: string; port: number } };
  livenessProbe?: { httpGet: { path: string; port: number } };
  ports?: Array<{ containerPort: number }>;
}
interface Manifest {
  kind: string;
  metadata: { name: string };
  spec: { template?: { spec: { terminationGracePeriodSeconds: number; containers: Container[] } }; ports?: Array<{ targetPort: number }> };
}

// docs/examples/kubernetes.yaml, which docs/deploy.md points to: parsed, and each command it runs accepted by this build's CLI.
describe('the Kubernetes example in the docs', () => {
  const manifests = parseAllDocuments(readFileSync(join(REPO_ROOT, 'docs', 'examples', 'kubernetes.yaml'), 'utf8')).map((d) => d.toJS() as Manifest);
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
    // Longer than hookrun's own graceful stop (SHUTDOWN_TIMEOUT_MS, 8 s by default).
    for (const m of manifests.slice(0, 2)) expect(m.spec.template!.spec.terminationGracePeriodSeconds).toBeGreaterThan(8);
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
