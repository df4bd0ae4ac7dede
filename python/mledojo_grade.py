"""MLE-Dojo's data layout and grading, done with MLE-Dojo's own code imported from the user's checkout.

layout: a competition as MLE-Dojo's env opens it, <dest>/<id>/data/{public,private}: public/ with the data, the
sample submission and description.txt, private/ with test_answer.csv and the two leaderboards. From MLE-Dojo's
prepared data (linked), or from a Kaggle raw download (MLE-bench keeps one per competition) that MLE-Dojo's own
prepare() splits, followed by the copies its prepare/mle.py makes from the competition's info/ folder.

grade: every submission the env archived during the run (submission_<n>.csv, numbered in the order of the
execute_code calls that wrote one) is graded again with the env's own scorer (CodeExecutionInterface), the best one
picked by the env's rule (raw score, the metric's direction, the first of equals), and compared with what the env
recorded in env_history/history.json. HumanRank is the env's position score: for each of the private and public
leaderboards (rows of <rank, score>), (N - p + 1) / N where p is the first row the score reaches and N the rows,
averaged over the boards present; unrounded, in [0, 1].
"""

import contextlib
import json
import math
import re
import shutil
import sys
import tempfile
from pathlib import Path


def import_checkout(checkout: Path) -> None:
    root = str(checkout.resolve())
    if root not in sys.path:
        sys.path.insert(0, root)


def layout(checkout: Path, dest: Path, competition: str, prepared: str | None, raw: str | None) -> None:
    target = dest / competition / 'data'
    target.parent.mkdir(parents=True, exist_ok=True)
    if prepared:
        src = Path(prepared).resolve()
        for part in ('public', 'private'):
            if not (src / part).is_dir():
                raise SystemExit(f'mledojo-driver: {src} has no {part}/ (MLE-Dojo prepared data is <id>/data/{part})')
        target.symlink_to(src, target_is_directory=True)
        return
    import_checkout(checkout)
    from mledojo.competitions import get_prepare

    prepare = get_prepare(competition)
    if prepare is None:
        raise SystemExit(f'mledojo-driver: the checkout has no prepare() for {competition}')
    public, private = target / 'public', target / 'private'
    public.mkdir(parents=True)
    private.mkdir(parents=True)
    # prepare() deletes its raw folder when done: it works on a copy.
    scratch = Path(tempfile.mkdtemp(prefix='mledojo-raw-', dir=dest))
    shutil.copytree(raw, scratch / 'raw', symlinks=False)
    with contextlib.redirect_stdout(sys.stderr):
        prepare(scratch / 'raw', public, private)
    shutil.rmtree(scratch, ignore_errors=True)
    info = checkout.resolve() / 'mledojo' / 'competitions' / competition / 'info'
    if (info / 'description.txt').is_file():
        shutil.copy2(info / 'description.txt', public / 'description.txt')
    for board in ('public_leaderboard.csv', 'private_leaderboard.csv'):
        if (info / board).is_file():
            shutil.copy2(info / board, private / board)


def env_output(run: Path, competition: str) -> Path | None:
    """The env's output folder: <out>/<id> for MLE-Agent, the AIDE workspace <out>/<id>/<n>-<slug> for AIDE."""
    found = sorted((run / 'output' / competition).glob('**/env_history/history.json'))
    return found[0].parent.parent if found else None


def submission_number(path: Path) -> int:
    found = re.search(r'_(\d+)\.csv$', path.name)
    return int(found.group(1)) if found else 0


def better(new, best, higher_is_better: bool) -> bool:
    """The env's rule for its best score (KaggleEnvironment._is_better_score)."""
    if new is None or math.isnan(new):
        return False
    if best is None or math.isnan(best):
        return True
    return new > best if higher_is_better else new < best


def regrade(checkout: Path, data: Path, competition: str, files: list[Path], scratch: Path) -> tuple[list, bool]:
    import_checkout(checkout)
    from mledojo.competitions import get_metric
    from mledojo.gym.competition import CompInfo, Competition
    from mledojo.gym.interface import CodeExecutionInterface

    comp = Competition(competition, str(data / competition / 'data'), CompInfo(), get_metric(competition))
    higher = comp.create_metrics().higher_is_better
    grader = CodeExecutionInterface()
    graded = []
    for file in files:
        with contextlib.redirect_stdout(sys.stderr):  # the scorer prints each leaderboard's head
            graded.append(grader._process_submission(comp, file, scratch, 'position'))
    return graded, higher


def journal_of(run: Path, competition: str, solver: str) -> tuple[str | None, int | None]:
    """The agent's own record: AIDE's journal.json (its nodes), MLE-Agent's trajectory.json (its messages)."""
    out = run / 'output' / competition
    if solver == 'aide':
        found = sorted(out.glob('logs/*/journal.json'))
        if not found:
            return None, None
        nodes = json.loads(found[0].read_text()).get('nodes', [])
        return str(found[0].relative_to(run)), len(nodes)
    path = out / 'agent_history' / 'trajectory.json'
    return (str(path.relative_to(run)), None) if path.is_file() else (None, None)


def log_reason(run: Path, crashed: bool) -> str | None:
    """Why main.py stopped, from its log: the agent's own error action, or (when main.py crashed) the last line of
    its traceback; the sandbox's tracebacks of the agent's code are in the same log, so only a crash reads them."""
    log = run / 'main.log'
    if not log.is_file():
        return None
    lines = log.read_text(errors='replace').splitlines()
    for line in reversed(lines):
        if 'Agent returned error:' in line:
            return 'the agent stopped: ' + line.split('Agent returned error:', 1)[1].strip()[:300]
    if crashed and any(line.startswith('Traceback') for line in lines):
        tail = [line for line in lines if line.strip()]
        return tail[-1][:300] if tail else None
    return None


def failure_reason(run: Path, exit_code, timed_out: bool, graded: list, executes: int) -> str:
    if timed_out:
        return 'main.py ran past the time limit and was stopped'
    reason = log_reason(run, exit_code not in (0, None))
    if exit_code not in (0, None):
        return f'main.py exited with {exit_code}' + (f': {reason}' if reason else '')
    if graded:
        errors = {g.get('error_type') or g.get('status') for g in graded}
        return f'{len(graded)} submission(s), none graded: ' + ', '.join(sorted(str(e) for e in errors))
    base = f'no submission: {executes} execute_code call(s) wrote no gradable file'
    return base + (f' ({reason})' if reason else '')


def grade(args, exit_code, timed_out: bool) -> dict:
    run, data, checkout = Path(args.run).resolve(), Path(args.data).resolve(), Path(args.checkout)
    out = env_output(run, args.competition)
    history = json.loads((out / 'env_history' / 'history.json').read_text()) if out else {}
    actions = history.get('actions', [])
    files = sorted(out.glob('submission_*.csv'), key=submission_number) if out else []
    graded, higher = regrade(checkout, data, args.competition, files, Path(tempfile.mkdtemp())) if files else ([], True)
    best = None
    for i, g in enumerate(graded):
        if g.get('status') == 'SUCCESS' and better(
            g.get('raw_score'), graded[best]['raw_score'] if best is not None else None, higher
        ):
            best = i
    journal, nodes = journal_of(run, args.competition, args.solver)
    result = {
        'competition': args.competition,
        'solver': args.solver,
        'exit_code': exit_code,
        'timed_out': timed_out,
        'executes': sum(1 for a in actions if a.get('action') == 'execute_code'),
        'steps': history.get('step_count', 0) if nodes is None else nodes,
        'submissions': len(files),
        'valid': best is not None,
        'journal': journal,
        'harness': {
            'best_raw_score': history.get('best_raw_score'),
            'best_position_score': history.get('best_position_score'),
        },
    }
    if best is not None:
        chosen = graded[best]
        shutil.copy2(files[best], run / 'submission.csv')
        pos = chosen.get('position_score', {})
        result.update(
            {
                'submission': str(files[best].relative_to(run)),
                'raw_score': chosen['raw_score'],
                'human_rank': pos.get('avg_score'),
                'boards': {k: v for k, v in pos.items() if k in ('private', 'public')},
            }
        )
        result['agrees'] = (
            result['raw_score'] == result['harness']['best_raw_score']
            and result['human_rank'] == result['harness']['best_position_score']
        )
    else:
        result['failure'] = failure_reason(run, exit_code, timed_out, graded, result['executes'])
    (run / 'result.json').write_text(json.dumps(result, indent=2, default=float))
    return result
