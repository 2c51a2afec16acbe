/** One stage of a Dockerfile: its name (`AS …`, or its index), what it is FROM, and its instructions. */
export interface DockerStage {
  name: string;
  from: string;
  body: string;
}

/** The stages of a Dockerfile in order, so a test can follow the one a target builds (no container engine runs here). */
export function dockerStages(dockerfile: string): DockerStage[] {
  const starts = [...dockerfile.matchAll(/^FROM (\S+)(?: AS (\S+))?$/gm)];
  return starts.map((start, i) => ({
    name: start[2] ?? String(i),
    from: start[1]!,
    body: dockerfile.slice(start.index + start[0].length, starts[i + 1]?.index ?? dockerfile.length),
  }));
}

/**
 * The instructions a target carries: its own and those of the stages it is
 * built FROM (ENV, HEALTHCHECK and CMD are inherited), base stages first.
 */
export function targetInstructions(dockerfile: string, target: string): string {
  const stages = dockerStages(dockerfile);
  const chain: DockerStage[] = [];
  for (let stage = stages.find((s) => s.name === target); stage; stage = stages.find((s) => s.name === stage!.from)) chain.unshift(stage);
  if (chain.length === 0) throw new Error(`the Dockerfile has no stage ${target}`);
  return chain.map((s) => s.body).join('\n');
}

/** The shell commands of a stage's RUN instructions, as `/bin/sh -c` runs them. */
export function stageRuns(dockerfile: string, stage: string): string[] {
  const found = dockerStages(dockerfile).find((s) => s.name === stage);
  if (!found) throw new Error(`the Dockerfile has no stage ${stage}`);
  return [...found.body.matchAll(/^RUN (.*(?:\\\n.*)*)$/gm)].map((m) => m[1]!);
}

/** The `KEY=value` pairs of a Dockerfile's (or a target's) ENV lines. */
export function dockerEnv(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/^ENV (.*)$/gm)].flatMap((line) => [...line[1]!.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!])));
}
