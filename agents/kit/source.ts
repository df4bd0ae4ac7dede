// The solution kit as it ships: mlekit.py with the design matrix it shares
// with the task generator's reference teams appended (one self-contained
// script: a jail's workspace has no package to import it from).
import { assetText } from '../../core/assets.js';

export function kitSource(): string {
  return `${assetText('agents/kit/mlekit.py').trimEnd()}\n\n\n${assetText('tasks/py/design_matrix.py')}`;
}
