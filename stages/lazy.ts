// A stage's run() loaded on first use. Its code, and what that imports (the
// sandbox, agents, execa), is needed only when a node runs; validating or
// planning an experiment reads just the stage's schema, checks and key extras.
import type { StageContext, StageResult } from './contract.js';

type RunModule<P> = { run(ctx: StageContext<P>): Promise<StageResult | void> };

export function lazyRun<P>(load: () => Promise<RunModule<P>>): (ctx: StageContext<P>) => Promise<StageResult | void> {
  return async (ctx) => (await load()).run(ctx);
}
