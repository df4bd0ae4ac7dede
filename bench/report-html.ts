// The HTML report's open time in headless Chromium (Debian's /usr/bin/chromium): a page over
// 10,000 synthetic trajectories, which loads each trajectory only when it is opened, against
// the same page over 100 and against one with all 10,000 trajectories inlined (what loading
// them up front would cost). Open time: from navigation until the page has built its
// sections and the browser lists its first rows, the median of 5 opens. The last line is JSON.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { syntheticReport } from '../test/report-synthetic.js';

const load = () => loadavg().map((x) => Number(x.toFixed(2)));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function openMs(browser: Browser, file: string, times = 5): Promise<number> {
  const ms: number[] = [];
  for (let k = 0; k < times; k++) {
    const page = await browser.newPage();
    const t0 = performance.now();
    await page.goto(`file://${file}`);
    await page.waitForSelector('body[data-ready="1"] #t-list tr');
    ms.push(performance.now() - t0);
    await page.close();
  }
  return Math.round(median(ms));
}

/** The same page with every trajectory inlined as a script: all of them parsed before it opens. */
async function inlinedCopy(dir: string, n: number): Promise<string> {
  const parts: string[] = [];
  for (let i = 0; i < n; i++)
    parts.push(await readFile(join(dir, 'trajectories', String(Math.floor(i / 1000)), `${i}.js`), 'utf8'));
  const html = await readFile(join(dir, 'index.html'), 'utf8');
  const file = join(dir, 'inlined.html');
  // The trajectories' calls run after the page script has defined mlepipeTrajectory.
  const end = html.lastIndexOf('</body>');
  await writeFile(
    file,
    `${html.slice(0, end)}<script>${parts.join('').replace(/<\/script/gi, '<\\/script')}</script>\n${html.slice(end)}`,
  );
  return file;
}

const root = await mkdtemp(join(tmpdir(), 'mlepipe-bench-report-'));
const before = load();
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const t0 = performance.now();
  const big = await syntheticReport(join(root, 'big'), 10_000, ['agents@a', 'agents@b']);
  const writeS = (performance.now() - t0) / 1000;
  const small = await syntheticReport(join(root, 'small'), 100);
  const pageKiB = Math.round((await readFile(big)).length / 1024);
  const files = (await readdir(join(root, 'big', 'trajectories'))).length;
  const inlined = await inlinedCopy(join(root, 'big'), 10_000);
  const inlinedKiB = Math.round((await readFile(inlined)).length / 1024);
  const ms10k = await openMs(browser, big);
  const ms100 = await openMs(browser, small);
  const msInlined = await openMs(browser, inlined, 3);
  console.log(
    `wrote 10,000 trajectories in ${writeS.toFixed(1)} s (${files} folders); page ${pageKiB} KiB, inlined ${inlinedKiB} KiB`,
  );
  console.log(
    `open: 10,000 trajectories ${ms10k} ms (goal < 1000), 100 trajectories ${ms100} ms, all 10,000 inlined ${msInlined} ms`,
  );
  const after = load();
  console.log(`load average before ${before.join(' ')}, after ${after.join(' ')}`);
  console.log(
    JSON.stringify({
      open_ms_10k: ms10k,
      open_ms_100: ms100,
      open_ms_inlined_10k: msInlined,
      ratio_10k_vs_100: +(ms10k / ms100).toFixed(2),
      speedup_vs_inlined: +(msInlined / ms10k).toFixed(2),
      page_kib: pageKiB,
      inlined_kib: inlinedKiB,
      write_s: +writeS.toFixed(1),
      load_before: before,
      load_after: after,
    }),
  );
} finally {
  await browser.close();
  await rm(root, { recursive: true, force: true });
}
