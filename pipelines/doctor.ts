// `mlepipe doctor`: what this machine has for mlepipe, and the fix for each missing piece.
import { choosePython, type PythonChoice } from '../core/python.js';
import type { Settings } from './config/types.js';
import { inspectEnvs, type EnvReport } from './pyenvs.js';
import type { Check } from './doctor/check.js';
import { envCheck, gradingCheck, pythonCheck } from './doctor/python.js';
import { hostChecks, sandboxChecks } from './doctor/sandbox.js';

export interface Report {
  python: PythonChoice;
  environments: EnvReport[];
  checks: Check[];
}

export async function runChecks(settings: Settings, env: NodeJS.ProcessEnv = process.env): Promise<Report> {
  const checks: Check[] = [];
  const major = Number(process.versions.node.split('.')[0]);
  checks.push({
    name: 'node',
    ok: major >= 20,
    required: true,
    detail: `v${process.versions.node}`,
    fix: 'install Node.js 20 or newer',
  });
  const choice = choosePython(settings.python);
  const environments = await inspectEnvs();
  checks.push(
    await pythonCheck(
      settings,
      choice,
      environments.find((e) => e.name === 'agent')!,
    ),
  );
  checks.push(await gradingCheck(choice));
  for (const r of environments) checks.push(envCheck(r, choice));
  checks.push(...(await sandboxChecks(settings, choice, env)));
  checks.push(...(await hostChecks(settings)));
  return { python: choice, environments, checks };
}
