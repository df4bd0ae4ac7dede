"""One run of MLE-Dojo's own agents (its AIDE and its MLE-Agent) for mlepipe's harness stage.

Nothing of MLE-Dojo lives in this repository: the checkout the user names is read at run time. Its main.py loads an
agent's settings from ./mledojo/agent/<agent>/config.yaml relative to the working folder, so each run gets a folder
that mirrors the checkout with symbolic links, with only that one file written by us (from the SandMLE overlay's copy
when one is named, else the checkout's own) and main.py copied (Python puts a script's resolved folder first on its
path, so a linked main.py would import the checkout's package and read the checkout's config).

  layout  --checkout C --dest D --competition ID (--prepared DIR | --raw DIR)
  setup   --checkout C --data D --competition ID --solver aide|mleagent --run R --base-url U --model M ...
  exec    --run R            runs what setup wrote, logs in R/main.log, exits with main.py's code
  grade   --checkout C --data D --competition ID --solver S --run R   writes R/result.json (mledojo_grade.py)
  run     setup, exec and grade in one (the check script's path)
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mledojo_grade

# solver -> (main.py's --agent-type, the agent's config file in the checkout, the overlay's run script)
SOLVERS = {
    'mleagent': ('mle', 'mledojo/agent/mleagent/config.yaml', 'run_dojo_competitions_parallel.sh'),
    'aide': ('aide', 'mledojo/agent/aide/utils/config.yaml', 'run_dojo_competitions_aide.sh'),
}
# The module whose dataclasses OmegaConf checks MLE-Dojo's AIDE settings against.
AIDE_SCHEMA = 'mledojo/agent/aide/utils/config.py'
# Settings that are main.py's command-line flags rather than keys of the agent's YAML.
CLI_SETTINGS = {'max_steps': '--max-steps', 'execution_timeout': '--execution-timeout'}


def fail(message: str) -> None:
    print(f'mledojo-driver: {message}', file=sys.stderr)
    sys.exit(2)


def mirror(src: Path, dst: Path, keep: str) -> None:
    """Links every entry of src into dst except along the path `keep` (relative), which is descended into;
    the last part of `keep` is left for the caller to write."""
    dst.mkdir(parents=True, exist_ok=True)
    head, _, rest = keep.partition('/')
    for entry in src.iterdir():
        if entry.name == head:
            if rest:
                mirror(entry, dst / head, rest)
            continue
        (dst / entry.name).symlink_to(entry)


def read_overlay_steps(overlay: Path | None, script: str) -> dict[str, int]:
    """The flags the overlay's run script passes to main.py (only --max-steps today), read from its live lines."""
    if overlay is None or not (overlay / script).is_file():
        return {}
    live = [line for line in (overlay / script).read_text().splitlines() if not line.lstrip().startswith('#')]
    found = re.search(r'--max-steps\s+(\d+)', '\n'.join(live))
    return {'max_steps': int(found.group(1))} if found else {}


def set_dotted(doc: dict, key: str, value) -> None:
    node = doc
    parts = key.split('.')
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def find_key(doc: dict, key: str, prefix: str = '') -> str | None:
    """The dotted path of the first `key` in the YAML, breadth first: a flat setting (`steps`, `num_drafts`,
    `temperature`) names the key wherever the agent's file keeps it."""
    if key in doc:
        return prefix + key
    for name, value in doc.items():
        if isinstance(value, dict):
            found = find_key(value, key, f'{prefix}{name}.')
            if found:
                return found
    return None


def parse_value(text: str):
    """An override's value as YAML reads it (numbers, booleans, null), else the string."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def endpoint_settings(base_url: str, model: str, api_key: str | None) -> dict:
    """MLE-Dojo's 'local' mode ignores base_url and talks to http://localhost:<port>/v1, so the endpoint must be
    on this host; base_url is still written, as the overlay does, for the record."""
    url = urlparse(base_url)
    if url.hostname not in ('localhost', '127.0.0.1') or url.port is None:
        fail(f"MLE-Dojo's local model mode only reaches http://localhost:PORT/v1; the policy is at {base_url}")
    if url.path.rstrip('/') != '/v1':
        fail(f'MLE-Dojo appends nothing but /v1 to localhost:PORT; the policy is at {base_url}')
    return {
        'model_mode': 'local',
        'model_name': model,
        'base_url': base_url,
        'port': url.port,
        'api_key': api_key or 'EMPTY',
    }


def agent_config(args, rel: str) -> tuple[dict, str, list[str]]:
    """The agent's YAML: the overlay's when it has one, else the checkout's; the endpoint and overrides applied."""
    overlay = Path(args.overlay) if args.overlay else None
    source = overlay / rel if overlay is not None and (overlay / rel).is_file() else Path(args.checkout) / rel
    doc = yaml.safe_load(source.read_text()) or {}
    llm = endpoint_settings(args.base_url, args.model, args.api_key)
    target = doc.setdefault('agent', {})
    if args.solver == 'aide':
        target = target.setdefault('code', {})
    target.update(llm)
    dropped = []
    if args.solver == 'aide' and 'base_url' not in (Path(args.checkout) / AIDE_SCHEMA).read_text():
        # The overlay's AIDE file names base_url, which MLE-Dojo's AIDE schema (StageConfig) does not declare:
        # OmegaConf refuses the whole file. Its local mode never reads it, so it is left out.
        target.pop('base_url', None)
        dropped.append('agent.code.base_url')
    for item in args.set or []:
        key, _, value = item.partition('=')
        if key in CLI_SETTINGS:
            continue
        path = key if '.' in key else find_key(doc, key)
        if path is None:
            fail(f"MLE-Dojo's {args.solver} config ({source}) has no setting {key}")
        set_dotted(doc, path, parse_value(value))
    return doc, str(source), dropped


def setup(args) -> dict:
    if args.solver not in SOLVERS:
        fail(f'unknown solver {args.solver}: MLE-Dojo has {", ".join(SOLVERS)}')
    agent_type, rel, script = SOLVERS[args.solver]
    checkout, run = Path(args.checkout).resolve(), Path(args.run).resolve()
    tree = run / 'harness'
    if tree.exists():
        shutil.rmtree(tree)
    mirror(checkout, tree, rel)
    (tree / 'main.py').unlink()
    shutil.copy2(checkout / 'main.py', tree / 'main.py')
    doc, source, dropped = agent_config(args, rel)
    (tree / rel).write_text(yaml.safe_dump(doc, sort_keys=False))
    flags = read_overlay_steps(Path(args.overlay) if args.overlay else None, script)
    if args.time_s:
        flags['execution_timeout'] = int(args.time_s)
    for item in args.set or []:
        key, _, value = item.partition('=')
        if key in CLI_SETTINGS:
            flags[key] = int(value)
    argv = [args.python, 'main.py', '--output-dir', str(run / 'output'), '--data-dir', str(Path(args.data).resolve())]
    argv += ['--competition-name', args.competition, '--agent-type', agent_type]
    for key, value in flags.items():
        argv += [CLI_SETTINGS[key], str(value)]
    plan = {'argv': argv, 'cwd': str(tree), 'config': str(tree / rel), 'config_from': source, 'flags': flags}
    plan['dropped'] = dropped
    plan['python_dir'] = str(Path(args.python).parent)
    (run / 'mledojo-run.json').write_text(json.dumps(plan, indent=2))
    return plan


def execute(run: Path) -> int:
    """Runs main.py as setup planned it. The sandbox inside MLE-Dojo runs the agent's code with `python3` from
    PATH, so the chosen interpreter's folder goes first; a stop signal reaches main.py's whole process group."""
    plan = json.loads((run / 'mledojo-run.json').read_text())
    env = dict(os.environ)
    env['PATH'] = plan['python_dir'] + os.pathsep + env.get('PATH', '')
    env['PYTHONUNBUFFERED'] = '1'
    with open(run / 'main.log', 'wb') as log:
        child = subprocess.Popen(
            plan['argv'], cwd=plan['cwd'], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

        def forward(signum, _frame):
            try:
                os.killpg(child.pid, signum)
            except ProcessLookupError:
                pass

        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, forward)
        code = child.wait()
    (run / 'exit.json').write_text(json.dumps({'code': code}))
    return code


def common(p: argparse.ArgumentParser, solver: bool = True) -> None:
    p.add_argument('--checkout', required=True)
    p.add_argument('--data', required=True, help='the folder holding <competition>/data/{public,private}')
    p.add_argument('--competition', required=True)
    p.add_argument('--run', required=True)
    if solver:
        p.add_argument('--solver', required=True, choices=sorted(SOLVERS))


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog='mledojo_driver')
    sub = top.add_subparsers(dest='cmd', required=True)
    lay = sub.add_parser('layout')
    lay.add_argument('--checkout', required=True)
    lay.add_argument('--dest', required=True)
    lay.add_argument('--competition', required=True)
    lay.add_argument('--prepared')
    lay.add_argument('--raw')
    for name in ('setup', 'run'):
        p = sub.add_parser(name)
        common(p)
        p.add_argument('--base-url', required=True)
        p.add_argument('--model', required=True)
        p.add_argument('--api-key')
        p.add_argument('--overlay', help="SandMLE checkout's scaffolds/mle-dojo folder")
        p.add_argument('--python', default=sys.executable)
        p.add_argument('--time-s', type=int, help="main.py's --execution-timeout")
        p.add_argument(
            '--set',
            action='append',
            help='KEY=VALUE: a key of the agent YAML (dotted, or a name found in it), or max_steps',
        )
    ex = sub.add_parser('exec')
    ex.add_argument('--run', required=True)
    gr = sub.add_parser('grade')
    common(gr)
    gr.add_argument('--exit-code', type=int)
    gr.add_argument('--timed-out', action='store_true')
    return top


def main() -> None:
    args = parser().parse_args()
    if args.cmd == 'layout':
        if bool(args.prepared) == bool(args.raw):
            fail('layout takes exactly one of --prepared and --raw')
        mledojo_grade.layout(Path(args.checkout), Path(args.dest), args.competition, args.prepared, args.raw)
    elif args.cmd == 'setup':
        print(json.dumps(setup(args)))
    elif args.cmd == 'exec':
        sys.exit(execute(Path(args.run)))
    elif args.cmd == 'grade':
        result = mledojo_grade.grade(args, args.exit_code, args.timed_out)
        print(json.dumps(result))
    else:
        setup(args)
        code = execute(Path(args.run))
        print(json.dumps(mledojo_grade.grade(args, code, False)))


if __name__ == '__main__':
    main()
