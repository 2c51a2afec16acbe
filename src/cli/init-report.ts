import { relative } from 'node:path';
import type { InitResult } from './init-plan.js';

const list = (items: readonly string[]) => items.join(', ');

/** The lines saying what init did to an existing app: files, scripts, dependencies, settings, and what it left alone. */
function changes(result: InitResult): string[] {
  const of = (kind: string) => result.steps.filter((step) => step.kind === kind).map((step) => step.path);
  const lines: string[] = [];
  if (of('create').length > 0) lines.push(`files: ${list(of('create'))}`);
  const merge = result.packageJson;
  for (const script of merge?.scripts ?? [])
    lines.push(`script ${script.name}: ${script.command}${script.insteadOf ? ` (your "${script.insteadOf}" is kept)` : ''}`);
  for (const name of merge?.scriptsNotAdded ?? []) lines.push(`script ${name}: not added ("${name}" and "hookrun:${name}" are yours)`);
  for (const section of ['dependencies', 'devDependencies'] as const) {
    const added = (merge?.dependencies ?? []).filter((dep) => dep.section === section).map((dep) => `${dep.name}@${dep.spec}`);
    if (added.length > 0) lines.push(`${section}: ${list(added)}`);
  }
  if (result.specSource === 'app') lines.push(`hookrun: yours kept (${result.hookrunSpec})`);
  for (const step of result.steps) if (step.kind === 'append') lines.push(`${step.path}: added ${list(step.added)}`);
  if (of('keep').length > 0) lines.push(`kept yours, hookrun's not written: ${list(of('keep'))}`);
  if (of('keep').includes('tsconfig.json')) lines.push(`  (to type-check jobs/ and handlers/, include them in your tsconfig.json)`);
  if (of('same').length > 0) lines.push(`already there: ${list(of('same'))}`);
  return lines;
}

/**
 * What `hookrun init` prints: the files it created (a new project) or what it
 * added to the app, the one line on installing hookrun when only its version
 * says where it comes from, and the commands to run next. `typed` is the
 * folder as the user typed it, for `cd`.
 */
export function formatInitReport(result: InitResult, typed: string, cwd: string): string {
  const created = result.steps.filter((step) => step.kind === 'create').map((step) => step.path);
  const wrote = result.steps.some((step) => step.kind === 'create' || step.kind === 'append' || step.kind === 'merge');
  const body = result.existing
    ? `${wrote ? 'Added hookrun to' : 'Nothing to add: hookrun is already in'} ${result.dir}:\n${changes(result)
        .map((line) => `  ${line}`)
        .join('\n')}`
    : `Created ${result.dir}:\n${created.map((file) => `  ${file}`).join('\n')}`;
  const hint =
    result.specSource === 'version'
      ? `\n\nhookrun@${result.hookrunSpec} is installed from the npm registry; if npm install ends in E404 there, install hookrun from where you got it: npm install <path to hookrun-x.y.z.tgz, or its git URL>.`
      : '';
  const dev = result.packageJson === undefined ? 'dev' : result.packageJson.scriptFor.dev;
  const next = [...(relative(cwd, result.dir) === '' ? [] : [`cd ${typed}`]), 'npm install', dev === undefined ? 'npx hookrun dev' : `npm run ${dev}`];
  return `${body}${hint}\n\nNext:\n${next.map((command) => `  ${command}`).join('\n')}\n`;
}
