import { formatDiagnostic } from '../../core/errors.js';
import { loadExperiment } from '../../pipelines/config/load.js';
import { makePlan, type Plan } from '../../pipelines/plan.js';
import type { IO } from '../io.js';
import { hostsFor } from '../../pipelines/config/hosts.js';
import type { KeyedNode } from '../../pipelines/compile/keys.js';
import { getStage } from '../../stages/registry.js';
import { blocked, missingLines, preflight, type Preflight } from '../../pipelines/preflight.js';
import { hasWork, planSizes, sizeJson, totalText, workText } from '../../pipelines/size.js';

/** Where a placed node will run: the host, or the hosts carrying its label, and the GPUs it takes; or where its stage sends it. */
function where(plan: Plan, node: KeyedNode): string {
  const st = node.stage;
  const sent = withPlacement(node).placement;
  const jails = sandboxes(node);
  if (st.on === undefined) return `${sent ? `  → ${sent}` : ''}${jails}`;
  const hosts = hostsFor(st.on, plan.experiment.settings.hosts);
  const gpus = st.gpus ? `, ${st.gpus} GPU${st.gpus === 1 ? '' : 's'}` : '';
  return `${hosts.length === 1 && hosts[0] === st.on ? `  on ${st.on}${gpus}` : `  on ${st.on} (${hosts.join(' or ')}${gpus})`}${jails}`;
}

/** `sandbox: { on: }`: where the node's episodes run, and what each run holds. */
function sandboxes(node: KeyedNode): string {
  const sb = node.stage.sandbox;
  if (!sb) return '';
  const each = [
    sb.gpusPerRun ? `${sb.gpusPerRun} GPU${sb.gpusPerRun === 1 ? '' : 's'}` : '',
    sb.cpusPerRun ? `${sb.cpusPerRun} CPUs` : '',
  ]
    .filter(Boolean)
    .join(' and ');
  return `  sandboxes on ${sb.on} (${sb.hosts.length ? sb.hosts.join(' or ') : 'no host carries it'}${each ? `; ${each} a run` : ''})`;
}

export interface PlanArgs {
  set?: string[];
  force?: boolean | string;
  rebuild?: boolean | string;
  only?: string;
  json?: boolean;
  /** Exit 3 when a node to run lacks something. */
  check?: boolean;
}

export async function planFor(file: string, args: PlanArgs, io: IO): Promise<Plan> {
  const exp = await loadExperiment(file, { overrides: args.set, env: io.env });
  return makePlan(exp, { force: args.force, rebuild: args.rebuild, only: args.only });
}

export function planJson(plan: Plan, pre?: Preflight): unknown {
  const sizes = planSizes(plan);
  return {
    experiment: plan.experiment.name,
    nodes: plan.nodes.map((p) => ({
      id: p.node.id,
      stage: p.node.stage.id,
      kind: p.node.kind,
      key: p.node.key,
      inputs: p.node.inputs,
      action: p.action,
      reason: p.reason,
      ...(p.from ? { from: p.from } : {}),
      ...(p.node.stage.on === undefined
        ? {}
        : {
            on: p.node.stage.on,
            hosts: hostsFor(p.node.stage.on, plan.experiment.settings.hosts),
            gpus: p.node.stage.gpus,
          }),
      ...withPlacement(p.node),
      ...(p.node.stage.sandbox ? { sandbox: { on: p.node.stage.sandbox.on, hosts: p.node.stage.sandbox.hosts } } : {}),
      ...(pre?.missing.has(p.node.id) ? { missing: pre.missing.get(p.node.id) } : {}),
      ...(sizes.get(p.node.id) ? { size: sizeJson(sizes.get(p.node.id)!) } : {}),
    })),
  };
}

function withPlacement(node: KeyedNode): { placement?: string } {
  const sent = getStage(node.kind)?.placement?.(node.params as never);
  return sent ? { placement: sent } : {};
}

export async function planCommand(file: string, args: PlanArgs, io: IO): Promise<number> {
  const plan = await planFor(file, args, io);
  for (const w of plan.experiment.warnings) io.err(`warning: ${formatDiagnostic(w)}`);
  const pre = await preflight(plan, { env: io.env });
  const code = args.check && blocked(pre).length ? 3 : 0;
  if (args.json) {
    io.out(JSON.stringify(planJson(plan, pre), null, 2));
    return code;
  }
  const count = (a: string) => plan.nodes.filter((p) => p.action === a).length;
  const rescore = count('rescore');
  const lines = [
    `${plan.experiment.name}: ${plan.nodes.length} nodes, ${count('run')} to run, ${rescore ? `${rescore} to rescore, ` : ''}${count('cached')} cached`,
  ];
  const w = Math.min(40, Math.max(...plan.nodes.map((p) => p.node.id.length)));
  const sizes = planSizes(plan);
  const toRun = plan.nodes.filter((p) => p.action === 'run');
  for (const p of plan.nodes) {
    const size = p.action === 'run' ? sizes.get(p.node.id) : undefined;
    const work = hasWork(size) ? [`  ${''.padEnd(7)}  ${''.padEnd(w)}  ${workText(size)}`] : [];
    lines.push(
      `  ${p.action.padEnd(7)}  ${p.node.id.padEnd(w)}  ${p.action === 'cached' ? p.node.key.slice(0, 12) : p.reason}${where(plan, p.node)}`,
      ...work,
      ...missingLines(pre, p.node.id),
    );
  }
  if (toRun.length) lines.push(totalText(toRun.map((p) => sizes.get(p.node.id))));
  // One write: a line at a time is a system call per node.
  io.out(lines.join('\n'));
  // A plain plan with nothing missing says nothing more: its output stays the plan alone.
  if (args.check || pre.missing.size) io.err(preflightSummary(plan, pre));
  return code;
}

/** One line: what the nodes to run lack, and that cached ones need nothing. */
export function preflightSummary(plan: Plan, pre: Preflight): string {
  const cached = plan.nodes.filter((p) => p.action === 'cached' || p.action === 'rescore').length;
  const rest = cached ? `; ${cached} cached node${cached === 1 ? '' : 's'} need nothing` : '';
  const stopped = blocked(pre).length;
  if (!stopped) {
    const lacking = pre.missing.size ? `; ${pre.missing.size} run without something listed` : '';
    return `preflight: nothing missing for the ${pre.checked.length} node(s) to run${lacking}${rest}`;
  }
  return `preflight: ${stopped} of ${pre.checked.length} node(s) to run lack what they need${rest} (mlepipe run refuses to start; --no-preflight runs anyway)`;
}
