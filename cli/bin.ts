// Process entry: signals and exit code. Ctrl-C (or SIGTERM) aborts the run so
// that running nodes stop their children and the cache stays consistent; a
// second one quits at once.
import { processIO } from './io.js';
import { main } from './main.js';

const controller = new AbortController();
let interrupts = 0;
const onSignal = (sig: NodeJS.Signals) => {
  interrupts++;
  if (interrupts > 1) process.exit(130);
  process.stderr.write(`\nmlepipe: ${sig}: stopping running nodes and cleaning up (again to quit at once)\n`);
  controller.abort();
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

process.exitCode = await main(process.argv.slice(2), processIO(controller.signal));
