"""scripts/check-mle-dojo.sh's helpers.

raw DEST            Kaggle-shaped raw downloads, synthetic, for two small MLE-Dojo competitions:
                    spooky-author-identification (train.zip holding train.csv: id, text, author) and
                    detecting-insults-in-social-commentary (train.csv and test_with_solutions.csv: Insult, Date,
                    Comment, Usage). MLE-Dojo's own prepare() then splits them.
serve PORT_FILE LOG a scripted OpenAI-compatible policy for MLE-Dojo's MLE-Agent: it asks for the data and
                    output paths, then runs a weak submission (the sample submission), a code that fails, and a
                    TF-IDF + logistic regression model, each as MLE-Agent's JSON action; the paths and the
                    competition come from the env's feedback in the conversation.
compare RESULTS...  prints each run's counts and exits 1 when mlepipe's grade differs from what MLE-Dojo recorded.
"""

import json
import random
import re
import sys
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pandas as pd

WORDS = {
    'EAP': 'raven midnight dreary chamber lenore ghastly tomb heart beneath floor'.split(),
    'HPL': 'eldritch cyclopean ancient ocean cult nameless horror stars sunken city'.split(),
    'MWS': 'creature frankenstein mountains grief wretched father lake geneva misery friend'.split(),
}
RUDE = 'idiot stupid moron dumb loser fool pathetic clown'.split()
KIND = 'thanks great article agree point nice helpful interesting view well'.split()


def sentence(rng: random.Random, vocab: list[str], common: list[str], n: int = 9) -> str:
    return ' '.join(rng.choice(vocab if rng.random() < 0.6 else common) for _ in range(n))


def raw(dest: Path) -> None:
    rng = random.Random(7)
    common = 'the of and a to in was it that with'.split()
    spooky = dest / 'spooky-author-identification'
    spooky.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(300):
        author = rng.choice(sorted(WORDS))
        rows.append({'id': f'id{i:05d}', 'text': sentence(rng, WORDS[author], common), 'author': author})
    with zipfile.ZipFile(spooky / 'train.zip', 'w') as z:
        z.writestr('train.csv', pd.DataFrame(rows).to_csv(index=False))
    insults = dest / 'detecting-insults-in-social-commentary'
    insults.mkdir(parents=True, exist_ok=True)
    for name, count, offset in (('train.csv', 200, 0), ('test_with_solutions.csv', 80, 1000)):
        rows = []
        for i in range(count):
            label = int(rng.random() < 0.4)
            text = f'"{sentence(rng, RUDE if label else KIND, common)} #{offset + i}"'
            rows.append({'Insult': label, 'Date': f'2012{(offset + i) % 12 + 1:02d}01000000Z', 'Comment': text})
        frame = pd.DataFrame(rows)
        if name != 'train.csv':
            frame['Usage'] = 'PrivateTest'
        frame.to_csv(insults / name, index=False)


MODEL = {
    'spooky-author-identification': """
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
train = pd.read_csv(DATA + '/train.csv'); test = pd.read_csv(DATA + '/test.csv')
vec = TfidfVectorizer(); x = vec.fit_transform(train['text'])
clf = LogisticRegression(max_iter=1000).fit(x, train['author'])
p = clf.predict_proba(vec.transform(test['text']))
sub = pd.DataFrame({'id': test['id']})
for i, c in enumerate(clf.classes_): sub[c] = p[:, i]
sub.to_csv(OUT + '/submission.csv', index=False)
print('done', len(sub))
""",
    'detecting-insults-in-social-commentary': """
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
train = pd.read_csv(DATA + '/train.csv'); test = pd.read_csv(DATA + '/test.csv')
vec = TfidfVectorizer(); x = vec.fit_transform(train['Comment'])
clf = LogisticRegression(max_iter=1000).fit(x, train['Insult'])
sub = pd.DataFrame({'Insult': clf.predict_proba(vec.transform(test['Comment']))[:, 1],
                    'Date': test['Date'], 'Comment': test['Comment']})
sub.to_csv(OUT + '/submission.csv', index=False)
print('done', len(sub))
""",
}


AIDE_PLANS = ['the sample submission as it is', 'a model that fails on purpose', 'TF-IDF and logistic regression']


def codes(data: str, out: str) -> list[str]:
    """The three scripts every agent gets in turn: the sample submission, a failure, the competition's model."""
    comp = next((c for c in MODEL if f'/{c}/' in data), None)
    head = f"DATA = {data!r}\nOUT = {out!r}\n"
    return [
        head + "import pandas as pd\npd.read_csv(DATA + '/sample_submission.csv').to_csv(OUT + '/submission.csv', "
        "index=False)\n",
        head + "raise RuntimeError('scripted failure')\n",
        head + MODEL.get(comp, ''),
    ]


def aide_reply(prompt: str, counts: dict) -> str:
    """MLE-Dojo's AIDE sends one system prompt a node, naming the folder its submission.csv goes to; the n-th
    call of a workspace gets the n-th plan (cycling), as a plan followed by one fenced code block."""
    found = re.search(r"submission.csv` file in the `([^`]+)` directory", prompt)
    out = found.group(1) if found else '.'
    n = counts.get(out, 0)
    counts[out] = n + 1
    return f'Plan: {AIDE_PLANS[n % 3]}.\n\n```python\n{codes(out + "/input", out)[n % 3]}```\n'


def reply(messages: list[dict], counts: dict) -> str:
    """The next action from what the conversation holds: the n-th assistant turn picks the n-th step."""
    if messages and 'Kaggle grandmaster attending a competition' in str(messages[0].get('content', '')):
        return aide_reply(str(messages[0]['content']), counts)
    turn = sum(1 for m in messages if m.get('role') == 'assistant')
    text = '\n'.join(str(m.get('content', '')) for m in messages if m.get('role') == 'user')
    data = re.search(r"(/[^\s'\"\\]+/data/public)", text)
    outs = re.findall(r"(/[^\s'\"\\]+/output/[^\s'\"\\]+)", text)
    if turn == 0 or data is None:
        return json.dumps({'action': 'request_info', 'params': {'info_type': 'data_path'}})
    if turn == 1 or not outs:
        return json.dumps({'action': 'request_info', 'params': {'info_type': 'output_path'}})
    steps = codes(data.group(1), outs[-1].rstrip('.,'))
    if turn - 2 < len(steps):
        return '```json\n' + json.dumps({'action': 'execute_code', 'params': {'code': steps[turn - 2]}}) + '\n```'
    return json.dumps({'action': 'request_info', 'params': {'info_type': 'overview'}})


def serve(port_file: str, log_path: str) -> None:
    lock = threading.Lock()
    counts: dict[str, int] = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get('content-length', 0))) or b'{}')
            with lock:
                content = reply(body.get('messages', []), counts)
            with lock, open(log_path, 'a') as log:
                log.write(json.dumps({'model': body.get('model'), 'reply': content[:200]}) + '\n')
            out = {
                'id': 'scripted',
                'object': 'chat.completion',
                'created': 0,
                'model': body.get('model', ''),
                'choices': [
                    {'index': 0, 'finish_reason': 'stop', 'message': {'role': 'assistant', 'content': content}}
                ],
                'usage': {'prompt_tokens': 1, 'completion_tokens': 1, 'total_tokens': 2},
            }
            data = json.dumps(out).encode()
            self.send_response(200)
            self.send_header('content-type', 'application/json')
            self.send_header('content-length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    Path(port_file).write_text(str(server.server_address[1]))
    server.serve_forever()


def compare(out: str) -> int:
    """Each run of a harness node: mlepipe's row (results.jsonl) against MLE-Dojo's env history (the driver's
    result.json keeps what history.json recorded)."""
    records = [json.loads(line) for line in (Path(out) / 'results.jsonl').read_text().splitlines() if line]
    bad = 0
    for rec in records:
        run = Path(out) / 'runs' / rec['task_id'] / rec['policy'] / str(rec['repeat'])
        mine = json.loads((run / 'result.json').read_text())
        h = mine['harness']
        ok = rec['score'] == h['best_raw_score'] and rec['human_rank'] == h['best_position_score']
        print(
            ('ok   ' if ok else 'DIFF ')
            + f"{rec['task_id']} {mine['solver']}: {mine['executes']} execute_code, {mine['submissions']} submission(s), "
            f"steps {rec['steps']}; mlepipe score {rec['score']}, HumanRank {rec['human_rank']} | MLE-Dojo recorded "
            f"{h['best_raw_score']}, {h['best_position_score']}"
        )
        bad += 0 if ok else 1
    valid = sum(1 for r in records if r['valid_submission'])
    print(f'{len(records) - bad} of {len(records)} runs agree with what MLE-Dojo recorded; {valid} valid submissions')
    return 1 if bad or not records else 0


if __name__ == '__main__':
    cmd = sys.argv[1]
    if cmd == 'raw':
        raw(Path(sys.argv[2]))
    elif cmd == 'serve':
        serve(sys.argv[2], sys.argv[3])
    else:
        sys.exit(compare(sys.argv[2]))
