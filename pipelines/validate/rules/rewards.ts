import type { Diagnostic } from '../../../core/errors.js';
import { dotted, pathKey, valuePos } from '../../../core/source.js';
import { FormulaError, parseFormula } from '../../../core/rewards/parse.js';
import { expandPreset } from '../../../core/rewards/presets.js';
import type { Rule } from './types.js';

/** Every `rewards:` formula parses and uses known variables; errors point into the formula. */
export const rewardFormulas: Rule = ({ doc, origins }) => {
  const out: Diagnostic[] = [];
  for (const [name, text] of Object.entries(doc.rewards ?? {})) {
    const path = ['rewards', name];
    const formula = expandPreset(text);
    try {
      parseFormula(formula);
    } catch (err) {
      if (!(err instanceof FormulaError)) throw err;
      const o = origins.get(pathKey(path));
      let pos = valuePos(origins, path);
      if (pos && o?.singleLine && formula === text) pos = { ...pos, col: pos.col + (o.contentShift ?? 0) + err.offset };
      out.push({ pos, path: dotted(path), message: `${err.message}` });
    }
  }
  return out;
};
