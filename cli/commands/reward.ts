import { UserError } from '../../core/errors.js';
import { evaluate, FormulaError, parseFormula, REWARD_VARIABLES } from '../../core/rewards/parse.js';
import { expandPreset, REWARD_PRESETS } from '../../core/rewards/presets.js';
import { suggestion } from '../../core/suggest.js';
import type { IO } from '../io.js';

/** `mlepipe reward 'FORMULA' --vars format=1,execute=1`: prints the value (unset variables are 0). */
export async function rewardCommand(
  formulaOrPreset: string | undefined,
  args: { vars?: string; list?: boolean },
  io: IO,
): Promise<number> {
  if (args.list || !formulaOrPreset) {
    const width = Math.max(...Object.keys(REWARD_PRESETS).map((name) => name.length));
    for (const [name, f] of Object.entries(REWARD_PRESETS)) io.out(`${name.padEnd(width)}  ${f}`);
    io.out(`variables: ${REWARD_VARIABLES.join(', ')}`);
    return 0;
  }
  const formula = expandPreset(formulaOrPreset);
  let ast;
  try {
    ast = parseFormula(formula);
  } catch (err) {
    if (!(err instanceof FormulaError)) throw err;
    throw new UserError(`${formula}\n${' '.repeat(err.offset)}^ ${err.message}`);
  }
  const vars: Record<string, number> = {};
  for (const part of (args.vars ?? '').split(',').filter(Boolean)) {
    const [name, raw] = part.split('=');
    if (!(REWARD_VARIABLES as readonly string[]).includes(name.trim())) {
      throw new UserError(
        `--vars: unknown variable "${name}"${suggestion(name.trim(), REWARD_VARIABLES)} (known: ${REWARD_VARIABLES.join(', ')})`,
      );
    }
    const v = raw === 'true' ? 1 : raw === 'false' ? 0 : Number(raw);
    if (raw === undefined || raw.trim() === '' || !Number.isFinite(v))
      throw new UserError(`--vars: ${part}: expected NAME=NUMBER`);
    vars[name.trim()] = v;
  }
  const value = evaluate(ast, vars);
  io.out(String(Number(value.toPrecision(12))));
  return 0;
}
