"""A client of `mlepipe sandbox serve`: the sandbox service that runs the
agent's code in mlepipe's jails and grades submissions outside them. The
service holds the tasks (their private answers included); the agent loop only
ever sends code and reads observations."""

import json
import os
import urllib.error
import urllib.request


class ServiceError(RuntimeError):
    pass


class SandboxService:
    def __init__(self, url=None, timeout_s=600.0):
        url = url or os.environ.get("MLEPIPE_SANDBOX_URL")
        if not url:
            raise ServiceError("no sandbox service: set MLEPIPE_SANDBOX_URL (printed by `mlepipe sandbox serve`)")
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        # The service's token, when it has one (launch.sh and trainer: verl pass it in the job's environment).
        token = os.environ.get("MLEPIPE_SANDBOX_TOKEN")
        self.headers = {"content-type": "application/json", **({"authorization": f"Bearer {token}"} if token else {})}

    def call(self, path, body, timeout_s=None):
        req = urllib.request.Request(
            self.url + path, data=json.dumps(body).encode(), headers=self.headers, method="POST"
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout_s or self.timeout_s) as res:
                return json.loads(res.read())
        except urllib.error.HTTPError as err:
            raise ServiceError(
                f"sandbox service {path}: {err.code} {err.read().decode(errors='replace')[:500]}"
            ) from None
        except urllib.error.URLError as err:
            raise ServiceError(f"sandbox service at {self.url} unreachable: {err.reason}") from None

    def open(self, task_id):
        return self.call("/open", {"task": task_id})["session"]

    def run(self, session, code, turn, timeout_ms):
        return self.call("/run", {"session": session, "code": code, "turn": turn, "timeout_ms": timeout_ms})

    def validate(self, session, path):
        return self.call("/validate", {"session": session, "path": path})["observation"]

    def grade(self, session, episode):
        return self.call("/grade", {"session": session, "episode": episode})

    def served_open(self, route, task_id, split, timeout_s=None):
        """Starts an episode the service runs with its scaffold (route: mlab or react); answers with
        its session and first request."""
        return self.call(f"/{route}/open", {"task": task_id, "split": split}, timeout_s)

    def served_reply(self, route, session, text, error=None, timeout_s=None):
        """The model's reply to the last request (or why there is none); answers with the next
        request, or `done` and the episode. The service runs the action before it answers."""
        return self.call(
            f"/{route}/reply",
            {"session": session, **({"error": error} if error is not None else {"text": text})},
            timeout_s,
        )

    def close(self, session):
        return self.call("/close", {"session": session})

    def shaping_plan(self, episode):
        """The episode's tool calls and the step's references from the solution bank, with β."""
        return self.call(
            "/shaping/plan",
            {
                "task_id": episode["task_id"],
                "step": episode.get("step", 0),
                "episode": {k: v for k, v in episode.items() if k != "session"},
            },
        )

    def shaping_record(self, episode, scores, timeout_s=None):
        """The scores, for the step's shaping metrics; answers with the scores to shape by (under the
        shuffle control, once the task's whole group has reported: hence the longer timeout)."""
        return self.call(
            "/shaping/record",
            {"task_id": episode["task_id"], "step": episode.get("step", 0), "scores": scores},
            timeout_s,
        )
