// `mlepipe report --html` checked in headless Chromium (Debian's package, driven by
// playwright-core; nothing downloads a browser): the quickstart's page after a small run of
// it, a grpo experiment's (curves, training rollouts, ablation variants side by side), and a
// synthetic page with what those runs do not record (an AIDE journal, SPICE scores, a tool
// call). Assertions are on the DOM; each page's screenshot is saved beside it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { copyFile, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { cli, outputsOf, readJsonl, ROOT, sharedCacheSettings, tmpProject } from '../helpers.js';
import { syntheticReport } from '../report-synthetic.js';

const CHROMIUM = '/usr/bin/chromium';
// A small quickstart: its tasks are shared (one cache) with the grpo experiment below.
const SMALL = [
  '-S',
  'stages.tasks.with.count=2',
  '-S',
  'stages.agents.with.policies=[scripted:random,scripted:linear]',
  '-S',
  'stages.agents.with.max_turns=4',
];
const GRPO = `name: tiny-grpo
stages:
  tasks: { uses: generate, with: { backend: procedural, seeds: mlebench, count: 2, seed: 0 } }
  verified: { uses: filter, needs: [tasks], with: { val: 0 } }
  rl: { uses: grpo, needs: [verified], with: { split: all, steps: 2, batch_size: 1, group_size: 2, max_turns: 2, seed: 0 } }
  test: { uses: eval, needs: [verified, rl], with: { policy: template, max_turns: 2 } }
  turns: { uses: ablate, target: test, matrix: { max_turns: [2, 3] } }
tables:
  curve: { from: rl, rows: curve, columns: [step, reward_mean, valid_rate] }
`;

const { settings } = await sharedCacheSettings();
const dir = await tmpProject({ 'e.yaml': GRPO }, settings);
await copyFile(join(ROOT, 'experiments', 'quickstart.yaml'), join(dir, 'quickstart.yaml'));
let browser: Browser;

test.before(async () => {
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
test.after(async () => {
  await browser?.close();
});

/** Opens a page from disk; records the trajectory files it asks for and any script error. */
async function open(file: string, width = 1400): Promise<{ page: Page; loads: string[]; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width, height: 1000 } });
  const loads: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => r.url().includes('/trajectories/') && loads.push(r.url()));
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await page.goto(`file://${file}`);
  await page.waitForSelector('body[data-ready="1"]');
  return { page, loads, errors };
}

const texts = (page: Page, sel: string) => page.locator(sel).allTextContents();

/**
 * The elements matching `sel` whose text does not show whole: cut inside the element (an ellipsis, hidden
 * overflow) or lying beyond the edges of the pane it scrolls in (the list, the detail).
 */
const clipped = (page: Page, sel: string) =>
  page.$$eval(sel, (els) =>
    els
      .filter((el) => {
        const pane = (el.closest('.list-pane, #t-detail') ?? document.body).getBoundingClientRect();
        const box = el.getBoundingClientRect();
        return el.scrollWidth > el.clientWidth + 1 || box.right > pane.right + 1 || box.left < pane.left - 1;
      })
      .map((el) => el.textContent),
  );

async function screenshot(page: Page, file: string): Promise<void> {
  await page.screenshot({ path: file, fullPage: true });
  const png = await readFile(file);
  assert.ok(png.subarray(1, 4).toString() === 'PNG' && (await stat(file)).size > 10_000, `${file} is a screenshot`);
}

test('quickstart: tables with their rows, the interactive figure, the funnel; a filter and a trajectory read turn by turn', async () => {
  const run = await cli(['run', 'quickstart.yaml', ...SMALL], { cwd: dir });
  assert.is(run.exitCode, 0, run.stderr);
  const r = await cli(['report', 'quickstart.yaml', '--html', ...SMALL], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr);
  assert.is(r.stdout.trim(), 'reports/quickstart/html/index.html');
  const stray = await cli(['report', 'quickstart.yaml', '--out', 'elsewhere', ...SMALL], { cwd: dir });
  assert.is(stray.exitCode, 2, stray.stderr);
  assert.match(
    stray.stderr,
    /--out is the folder the HTML report or the CSV files go into: use it with --html or --csv/,
  );
  const recorded = await readJsonl(
    join(
      (await cli(['outputs', 'quickstart.yaml', 'agents', ...SMALL], { cwd: dir })).stdout.trim(),
      'trajectories.jsonl',
    ),
  );
  const report = JSON.parse((await cli(['report', 'quickstart.yaml', '--json', ...SMALL], { cwd: dir })).stdout);

  const { page, loads, errors } = await open(join(dir, r.stdout.trim()));
  assert.equal(await texts(page, '[data-table] > h3'), ['medals', 'win_rate', 'funnel']);
  const medals = page.locator('[data-table="medals"] table.data tbody tr');
  assert.is(await medals.count(), report.tables.medals.rows.length);
  assert.equal(await texts(page, '[data-table="medals"] thead th'), report.tables.medals.columns);
  assert.equal(await texts(page, '[data-table="medals"] tbody tr td:first-child'), [
    'scripted:random',
    'scripted:linear',
  ]);
  // Vega drew the figure in the page, with its axis title.
  await page.waitForSelector('[data-figure="any-medal"] svg');
  assert.ok((await page.textContent('[data-figure="any-medal"] svg'))!.includes('any_medal'));
  const funnel = report.tables.funnel.rows[0];
  assert.equal(
    await texts(page, '#funnel .funnel-count'),
    [funnel.input, funnel.evaluator_ok ?? funnel.input, funnel.sane, funnel.unique].map(String),
  );

  // Nothing of a trajectory is loaded until one is opened.
  assert.is(await page.textContent('#t-count'), `${recorded.length} of ${recorded.length} trajectories`);
  assert.is(loads.length, 0);
  await page.selectOption('#f-policy', 'scripted:linear');
  const linear = recorded.filter((t) => t.policy === 'scripted:linear');
  assert.is(await page.textContent('#t-count'), `${linear.length} of ${recorded.length} trajectories`);
  assert.ok((await texts(page, '#t-list tr td:nth-child(2)')).every((p) => p === 'scripted:linear'));
  await page.click('#t-list tr.t-row >> nth=0');
  await page.waitForSelector('#t-detail .trajectory');
  assert.is(loads.length, 1);
  const t = linear[0];
  assert.is(await page.textContent('#t-detail .traj-title'), `${t.task_id} · scripted:linear · repeat 0`);
  assert.is(await page.locator('#t-detail .turn').count(), t.turns.length);
  assert.ok((await page.locator('#t-detail .turn .hljs-keyword').count()) > 0, 'the code is highlighted');
  assert.is(await page.textContent('#t-detail .grade .score'), String(Number(t.evaluation.score.toPrecision(4))));
  assert.equal((await texts(page, '#t-detail .variables th')).slice(0, 3), ['format', 'execute', 'valid']);
  assert.ok((await texts(page, '#t-detail .observation pre')).length > 0);
  assert.match((await texts(page, '#t-detail .turn-meta'))[0], /^turn 0 · \w+ · .*\d+\.\d+ s/);
  await screenshot(page, join(dir, 'quickstart.png'));
  assert.equal(errors, []);

  // From 1,100 px up every column of the list shows whole: the task ids, the score and reward.
  for (const width of [1100, 1400]) {
    const { page: p } = await open(join(dir, r.stdout.trim()), width);
    await p.click('#t-list tr.t-row >> nth=0');
    await p.waitForSelector('#t-detail .trajectory');
    assert.equal(await clipped(p, '.list thead th, #t-list td'), [], `at ${width} px`);
    assert.equal(await texts(p, '.list thead th'), [
      'task',
      'policy',
      'repeat',
      'variant',
      'outcome',
      'score',
      'reward',
      'turns',
    ]);
    assert.equal(await clipped(p, '#t-detail .traj-title'), [], `at ${width} px`);
    await screenshot(p, join(dir, `quickstart-${width}.png`));
  }
});

test('with JavaScript off the page says that it needs JavaScript', async () => {
  const file = await syntheticReport(join(dir, 'no-js'), 3);
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(`file://${file}`);
  const shown = await page.locator('body').innerText();
  assert.match(shown, /needs JavaScript/);
  assert.not.match(shown, /Loading/);
  await context.close();
});

test('grpo: curves per variant, training rollouts by step, and the ablation variants of an eval side by side', async () => {
  const run = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(run.exitCode, 0, run.stderr);
  const out = join(dir, 'grpo-report');
  const r = await cli(['report', 'e.yaml', '--html', '--out', out], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr);
  const rl = await outputsOf(dir, 'rl');
  const step1 = await readJsonl(join(rl, 'steps', 'step_00001.jsonl'));
  const { page, errors } = await open(join(out, 'index.html'));
  await page.waitForSelector('#curves [data-kind="grpo"] svg');
  assert.ok((await page.textContent('#curves [data-kind="grpo"] svg'))!.includes('reward_mean'));
  await page.selectOption('#f-node', 'rl');
  await page.selectOption('#f-step', '1');
  assert.match((await page.textContent('#t-count'))!, new RegExp(`^${step1.length} of `));
  await page.click('#t-list tr.t-row >> nth=0');
  await page.waitForSelector('#t-detail .trajectory');
  assert.match((await page.textContent('#t-detail .traj-sub'))!, /^rl · step 1 · react/);

  await page.selectOption('#f-step', '');
  await page.selectOption('#f-node', 'test@max_turns=2');
  await page.click('#t-list tr.t-row >> nth=0');
  await page.click('#t-compare');
  await page.waitForSelector('#t-detail .side-by-side');
  assert.equal(await texts(page, '#t-detail .side > h4'), ['max_turns=2', 'max_turns=3']);
  assert.is(await page.locator('#t-detail .side .trajectory').count(), 2);
  await screenshot(page, join(out, 'grpo.png'));
  assert.equal(errors, []);

  // Side by side, each variant's titles show whole from 1,100 px up.
  for (const width of [1100, 1400]) {
    const { page: p } = await open(join(out, 'index.html'), width);
    await p.selectOption('#f-node', 'test@max_turns=2');
    await p.click('#t-list tr.t-row >> nth=0');
    await p.click('#t-compare');
    await p.waitForSelector('#t-detail .side-by-side');
    assert.equal(await clipped(p, '#t-detail .side > h4, #t-detail .side .traj-title'), [], `at ${width} px`);
    assert.equal(await clipped(p, '#t-list td'), [], `at ${width} px`);
    await screenshot(p, join(out, `grpo-${width}.png`));
  }
});

test('an AIDE journal is drawn as its search tree; per-turn SPICE scores and tool calls are shown', async () => {
  const file = await syntheticReport(join(dir, 'synthetic'), 40);
  const { page, errors } = await open(file);
  assert.equal(await texts(page, '[data-table="medals"] .reference p'), ['paper — a paper']);
  // Trajectory 3 is an AIDE search; 0 is shaped by SPICE and opens with a tool call.
  await page.click('#t-list tr[data-i="3"]');
  await page.waitForSelector('#t-detail .journal');
  assert.equal(await texts(page, '#t-detail .journal li.node > a'), ['#0 draft', '#1 improve', '#2 improve']);
  assert.is(
    await page.locator('#t-detail .journal li[data-node="0"] > ul > li').count(),
    2,
    'both improvements hang from the draft',
  );
  assert.match((await page.textContent('#t-detail .journal li.best'))!, /★ chosen/);
  await page.click('#t-list tr[data-i="0"]');
  await page.waitForSelector('#t-detail[data-i="0"] .shaping');
  assert.equal(await texts(page, '#t-detail .shaping'), [
    'SPICE d = 0.25 · code · r = 0.025',
    'SPICE d = 0.5 · code · r = 0.05',
    'SPICE d = 0.75 · code · r = 0.075',
  ]);
  assert.match((await page.textContent('#t-detail .tool-call'))!, /tool call: ReadFile.*public\/description\.md/s);
  await page.selectOption('#f-outcome', 'gold');
  assert.ok((await texts(page, '#t-list tr td:nth-child(5)')).every((o) => o === 'gold'));
  await screenshot(page, join(dir, 'synthetic.png'));
  assert.equal(errors, []);
});

test.run();
