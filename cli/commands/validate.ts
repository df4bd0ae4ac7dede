import { formatDiagnostic, UserError, type Diagnostic } from '../../core/errors.js';
import { compileGraph } from '../../pipelines/compile/graph.js';
import { displayPath, loadExperiment } from '../../pipelines/config/load.js';
import type { IO } from '../io.js';

/** Validates every file, reporting all their errors together. */
export async function validateCommand(files: string[], opts: { set?: string[] }, io: IO): Promise<number> {
  const diags: Diagnostic[] = [];
  for (const file of files) {
    try {
      const exp = await loadExperiment(file, { overrides: opts.set, env: io.env });
      const g = compileGraph(exp);
      for (const w of exp.warnings) io.err(`warning: ${formatDiagnostic(w)}`);
      io.out(`${displayPath(file)}: ok (${exp.stages.length} stages, ${g.order.length} nodes)`);
    } catch (err) {
      if (!(err instanceof UserError)) throw err;
      // Name the file when the message does not (a missing file's message already does).
      const shown = displayPath(file);
      diags.push(
        ...err.diagnostics.map((d) =>
          d.pos || d.message.startsWith(`${shown}: `) ? d : { ...d, message: `${shown}: ${d.message}` },
        ),
      );
    }
  }
  if (diags.length) throw new UserError(diags);
  return 0;
}
