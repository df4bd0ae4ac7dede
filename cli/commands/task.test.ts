// `task show` on a folder of tasks: the tasks inside, one line each, instead of "not a task folder".
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../../core/errors.js';
import { memoryIO } from '../io.js';
import { taskShowCommand } from './task.js';

async function folder(tasks: Record<string, { json: object; description?: string }>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'mlepipe-task-show-'));
  for (const [name, t] of Object.entries(tasks)) {
    await mkdir(join(root, 'tasks', name, 'public'), { recursive: true });
    await writeFile(join(root, 'tasks', name, 'task.json'), JSON.stringify(t.json));
    if (t.description) await writeFile(join(root, 'tasks', name, 'public', 'description.md'), t.description);
  }
  await mkdir(join(root, 'tasks', 'notes'));
  return root;
}

const TASKS = {
  'b-task': {
    json: {
      id: 'b-task',
      task_type: 'tabular-regression',
      modality: 'tabular',
      domain: { scenario: 'Leak detection' },
    },
  },
  'a-task': {
    json: { id: 'a-task', generator: 'mltoolbench-import' },
    description: '\n# Fix the training loop\n\nMore.',
  },
};

test('a folder of tasks lists each task: id, kind, and a short description, sorted by id', async () => {
  const root = await folder(TASKS);
  for (const dir of [join(root, 'tasks'), root]) {
    const io = memoryIO({});
    assert.is(await taskShowCommand(dir, {}, io), 0);
    const tasksDir = join(root, 'tasks');
    assert.equal(io.stdout.join('\n').split('\n'), [
      `${dir}: 2 tasks (mlepipe task show ${tasksDir}/ID for one)`,
      '  a-task  mltoolbench-import  Fix the training loop',
      '  b-task  tabular-regression  Leak detection',
    ]);
  }
});

test('--json gives the list; a folder without tasks is still refused', async () => {
  const root = await folder(TASKS);
  const io = memoryIO({});
  await taskShowCommand(root, { json: true }, io);
  const out = JSON.parse(io.stdout.join('')) as { tasks: { id: string; kind: string; modality?: string }[] };
  assert.equal(
    out.tasks.map((t) => [t.id, t.kind, t.modality]),
    [
      ['a-task', 'mltoolbench-import', undefined],
      ['b-task', 'tabular-regression', 'tabular'],
    ],
  );
  const empty = await mkdtemp(join(tmpdir(), 'mlepipe-task-show-'));
  try {
    await taskShowCommand(empty, {}, memoryIO({}));
    assert.unreachable('an empty folder was shown');
  } catch (err) {
    assert.instance(err, UserError);
    assert.match((err as Error).message, 'no task folders inside (not a task folder)');
  }
});

test.run();
