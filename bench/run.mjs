// `npm run bench -- NAME`: builds the CLI, then runs bench/NAME.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';

const name = process.argv[2];
const available = readdirSync('bench')
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.slice(0, -3));
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- NAME   (NAME: ${available.join(', ')})`);
  process.exit(2);
}
const build = spawnSync(process.execPath, ['build.mjs'], { stdio: 'inherit' });
if (build.status !== 0 || !existsSync('dist/cli.js')) process.exit(build.status ?? 1);
const r = spawnSync(process.execPath, ['--import', 'tsx', `bench/${name}.ts`, ...process.argv.slice(3)], {
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
