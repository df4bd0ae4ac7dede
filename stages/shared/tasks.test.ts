import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, readFile, realpath, lstat, utimes, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { linkFolder, referenceChange } from '../../tasks/references.js';
import { writeTaskJson } from '../../tasks/taskjson.js';
import { listTasks } from './tasks.js';

/** A prepared folder elsewhere and a task that links to it, as the mlebench stage makes them. */
async function linkedTask() {
  const root = await mkdtemp(join(tmpdir(), 'mlepipe-ref-'));
  const prepared = join(root, 'data', 'comp', 'prepared', 'public');
  await mkdir(join(prepared, 'images'), { recursive: true });
  await writeFile(join(prepared, 'train.csv'), 'id,y\n1,0\n');
  await writeFile(join(prepared, 'images', 'a.png'), 'png');
  const task = join(root, 'tasks', 'comp');
  await mkdir(join(task, 'private'), { recursive: true });
  await writeFile(join(task, 'private', 'evaluator.py'), '');
  const references = { public: await linkFolder(prepared, task, 'public') };
  await writeTaskJson(task, { id: 'comp', references });
  return { root, prepared, task };
}

test('a linked folder: a symlink to the prepared data, recorded by name, size and time (no copy, no digest)', async () => {
  const { prepared, task } = await linkedTask();
  assert.ok((await lstat(join(task, 'public'))).isSymbolicLink());
  assert.is(await realpath(join(task, 'public')), await realpath(prepared));
  const json = JSON.parse(await readFile(join(task, 'task.json'), 'utf8'));
  assert.equal(
    json.references.public.files.map((f: [string, number, number]) => [f[0], f[1]]),
    [
      ['images/a.png', 3],
      ['train.csv', 9],
    ],
  );
  // The linked files are not digested into task.json's own file list.
  assert.equal(Object.keys(json.files).sort(), ['private/evaluator.py']);
  assert.is(await referenceChange(json.references.public), undefined);
});

test('a change behind the task is named: size, time, an added and a removed file', async () => {
  const { prepared, task } = await linkedTask();
  const ref = () => readFile(join(task, 'task.json'), 'utf8').then((t) => JSON.parse(t).references.public);
  await writeFile(join(prepared, 'train.csv'), 'id,y\n1,0\n2,1\n');
  assert.match((await referenceChange(await ref()))!, 'train.csv changed size (9 → 13 bytes)');
  const { task: t2, prepared: p2 } = await linkedTask();
  await utimes(join(p2, 'train.csv'), new Date(), new Date(Date.now() + 60_000));
  assert.match(
    (await referenceChange(JSON.parse(await readFile(join(t2, 'task.json'), 'utf8')).references.public))!,
    'train.csv was modified',
  );
  const { task: t3, prepared: p3 } = await linkedTask();
  await writeFile(join(p3, 'extra.csv'), 'x');
  assert.match(
    (await referenceChange(JSON.parse(await readFile(join(t3, 'task.json'), 'utf8')).references.public))!,
    'extra.csv was added',
  );
  await rm(join(p3, 'extra.csv'));
  await rm(join(p3, 'images', 'a.png'));
  assert.match(
    (await referenceChange(JSON.parse(await readFile(join(t3, 'task.json'), 'utf8')).references.public))!,
    'images/a.png was removed',
  );
});

test('listTasks refuses a task whose linked data changed since it was made, naming the task, the folder and the change', async () => {
  const { root, prepared } = await linkedTask();
  const list = () => listTasks({ tasks: join(root, 'tasks'), split: 'all', inputs: [], experimentDir: root });
  assert.equal(
    (await list()).map((t) => t.id),
    ['comp'],
  );
  await writeFile(join(prepared, 'train.csv'), 'id,y\n');
  try {
    await list();
    assert.unreachable('listTasks took a changed task');
  } catch (err) {
    assert.match(
      (err as Error).message,
      /^task comp: its public links to .*prepared\/public, which changed since the task was made \(train\.csv changed size \(9 → 5 bytes\)\)/,
    );
  }
});

test.run();
