import { loadSettings } from '../../pipelines/config/settings.js';
import { runChecks } from '../../pipelines/doctor.js';
import type { IO } from '../io.js';

/** Exit 3 when something required is missing. */
export async function doctorCommand(args: { json?: boolean }, io: IO): Promise<number> {
  const settings = await loadSettings(process.cwd(), io.env);
  const { python, environments, checks } = await runChecks(settings, io.env);
  if (args.json) io.out(JSON.stringify({ settings: settings.file ?? null, python, environments, checks }, null, 2));
  else {
    io.out(
      `settings: ${settings.file ?? '(none found; defaults)'}   cache: ${settings.cacheDir}   sandbox: ${settings.sandbox.backend}`,
    );
    for (const c of checks) {
      const mark = c.ok ? '✔' : c.required ? '✖' : '!';
      io.out(`${mark} ${c.name.padEnd(15)} ${c.detail}${c.required ? '' : c.ok ? '' : '  (optional)'}`);
      if (!c.ok && c.fix) io.out(`  fix: ${c.fix}`);
    }
  }
  return checks.some((c) => c.required && !c.ok) ? 3 : 0;
}
