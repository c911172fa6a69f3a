"""``blis evaluate --serve``: GEPA's HTTP evaluation-server protocol, over loopback, with the real CLI.

Starts ``node bin/blis.js evaluate --serve --port 0 --suite routing-prefix-heavy --budget N`` (or ``BLIS_CMD``
as the prefix) and speaks the protocol with urllib; the adapter of integrations/gepa is also pointed at it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import queue
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import unittest
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

REPO = Path(__file__).resolve().parents[2]
ROUTE = "function route(request, state) {\n  let best = state.instances[0];\n  for (const x of state.instances) if (x.load < best.load) best = x;\n  return best.id;\n}\n"
BROKEN = "function route(request, state) {\n  return state.instances[0].id +;\n}\n"
START_TIMEOUT_S = 60
REQUEST_TIMEOUT_S = 120


def _blis_cmd() -> list:
    override = os.environ.get("BLIS_CMD", "").strip()
    return shlex.split(override) if override else ["node", str(REPO / "bin" / "blis.js")]


def _load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, str(path))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def request(url: str, method: str = "GET", body: Any = None, raw: Optional[bytes] = None) -> Tuple[int, Any]:
    """One HTTP exchange; returns (status, decoded JSON body or None)."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode("utf-8"))
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=REQUEST_TIMEOUT_S) as res:
            status, payload = res.status, res.read()
    except urllib.error.HTTPError as e:
        status, payload = e.code, e.read()
    try:
        return status, json.loads(payload.decode("utf-8")) if payload else None
    except ValueError:
        return status, None


class Server:
    """A ``blis evaluate --serve`` subprocess; ``url`` from its first stdout line."""

    def __init__(self, budget: int) -> None:
        args = _blis_cmd() + ["evaluate", "--serve", "--port", "0", "--suite", "routing-prefix-heavy", "--budget", str(budget)]
        self.proc = subprocess.Popen(
            args,
            cwd=str(REPO),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=(os.name == "posix"),
        )
        lines: "queue.Queue[str]" = queue.Queue()
        threading.Thread(target=lambda: lines.put(self.proc.stdout.readline() if self.proc.stdout else ""), daemon=True).start()
        try:
            self.first_line = lines.get(timeout=START_TIMEOUT_S).rstrip("\n")
        except queue.Empty:
            self.stop()
            raise RuntimeError("blis evaluate --serve printed nothing within %ss" % START_TIMEOUT_S)
        m = re.match(r"^listening on (http://127\.0\.0\.1:\d+)$", self.first_line)
        if m is None:
            err = self.stop()
            raise RuntimeError("unexpected first line %r (stderr: %s) -- build with `npm run build` or set BLIS_CMD" % (self.first_line, err[-800:]))
        self.url = m.group(1)

    def stop(self) -> str:
        """Stops the server (SIGTERM, then SIGKILL); returns its stderr."""
        if self.proc.poll() is None:
            try:
                if os.name == "posix":
                    os.killpg(self.proc.pid, signal.SIGTERM)
                else:
                    self.proc.terminate()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                try:
                    if os.name == "posix":
                        os.killpg(self.proc.pid, signal.SIGKILL)
                    else:
                        self.proc.kill()
                except OSError:
                    pass
                self.proc.wait(timeout=10)
        try:
            _, err = self.proc.communicate(timeout=10)
        except (ValueError, subprocess.TimeoutExpired):
            err = ""
        return err or ""


class EvalServerProtocolTest(unittest.TestCase):
    """The protocol, the budget (3 evaluations) and the 429 after it."""

    server: Server

    def setUp(self) -> None:
        self.server = Server(budget=3)
        self.addCleanup(self.server.stop)

    def url(self, path: str) -> str:
        return self.server.url + path

    def test_protocol_and_budget(self) -> None:
        status, task = request(self.url("/task"))
        self.assertEqual(status, 200)
        self.assertEqual(task["suite"], "routing-prefix-heavy")
        self.assertEqual(task["examples"], ["steady@1", "steady@2", "hot@3", "hot@4"])
        self.assertTrue(task["objectives"])
        self.assertIn("route(request, state)", task["candidate_format"])

        status, st = request(self.url("/status"))
        self.assertEqual(status, 200)
        self.assertEqual(st["examples"], 4)
        self.assertEqual((st["budget"]["used"], st["budget"]["total"], st["budget"]["remaining"]), (0, 3, 3))

        # Validation is free.
        self.assertEqual(request(self.url("/validate"), "POST", {"candidate": {"routing": ROUTE}}), (200, {"valid": True}))
        status, v = request(self.url("/validate"), "POST", {"candidate": {"routing": BROKEN}})
        self.assertEqual(status, 200)
        self.assertFalse(v["valid"])
        self.assertIn("syntax", v["error"].lower())

        # Bad input: 400 / 404 / 405 / 413, none charged.
        self.assertEqual(request(self.url("/evaluate"), "POST", {"candidate": {"routing": ROUTE}, "example_id": "steady@99"})[0], 400)
        self.assertEqual(request(self.url("/evaluate"), "POST", raw=b'{"candidate": ')[0], 400)
        self.assertEqual(request(self.url("/evaluate"), "POST", {"candidate": 17})[0], 400)
        self.assertEqual(request(self.url("/evaluate"), "POST", {"candidate": {"nonsense": "x"}})[0], 400)
        self.assertEqual(request(self.url("/evaluate_examples"), "POST", {"candidate": {"routing": ROUTE}, "example_ids": ["steady@1", "x@1"]})[0], 400)
        self.assertEqual(request(self.url("/nowhere"))[0], 404)
        self.assertEqual(request(self.url("/evaluate"))[0], 405)
        self.assertEqual(request(self.url("/evaluate"), "POST", raw=b'{"candidate": "' + b"x" * (1024 * 1024 + 1) + b'"}')[0], 413)
        self.assertEqual(request(self.url("/status"))[1]["budget"]["used"], 0)

        # One example: charged 1.
        status, one = request(self.url("/evaluate"), "POST", {"candidate": {"routing": ROUTE}, "example_id": "steady@1"})
        self.assertEqual(status, 200)
        self.assertIsInstance(one["score"], float)
        self.assertGreater(one["score"], 0.0)
        self.assertEqual(one["score"], one["info"]["combined_score"])
        self.assertTrue(one["info"]["feedback"].strip())
        self.assertEqual(one["budget"]["used"], 1)

        # A failing candidate is a normal 200 with score 0 and the error (charged).
        status, bad = request(self.url("/evaluate"), "POST", {"candidate": {"routing": BROKEN}, "example_id": "steady@2"})
        self.assertEqual(status, 200)
        self.assertEqual(bad["score"], 0)
        self.assertEqual(bad["info"]["error"]["code"], "POLICY_CODE")
        self.assertEqual(bad["budget"]["used"], 2)

        # Two examples with one unit left: 429; one example: fine; then spent.
        status, short = request(self.url("/evaluate_examples"), "POST", {"candidate": {"routing": ROUTE}, "example_ids": ["steady@1", "steady@2"]})
        self.assertEqual(status, 429)
        self.assertIn("error", short)
        status, batch = request(self.url("/evaluate_examples"), "POST", {"candidate": {"routing": ROUTE}, "example_ids": ["steady@1"]})
        self.assertEqual(status, 200)
        self.assertEqual([r["example_id"] for r in batch["results"]], ["steady@1"])
        self.assertEqual(batch["results"][0]["score"], one["score"], "same candidate, same example, same score")
        self.assertEqual(batch["budget"]["remaining"], 0)
        status, spent = request(self.url("/evaluate"), "POST", {"candidate": {"routing": ROUTE}, "example_id": "steady@1"})
        self.assertEqual(status, 429)
        self.assertTrue(spent["budget"]["exhausted"])
        self.assertEqual(request(self.url("/status"))[1]["budget"]["used"], 3)


class EvalServerAdapterTest(unittest.TestCase):
    """The GEPA adapter over HTTP (BLIS_EVAL_URL): scores, a failed candidate scored 0, then refusals and budget
    exhaustion raised (set-up errors, not the candidate's fault)."""

    def setUp(self) -> None:
        self.server = Server(budget=3)
        self.addCleanup(self.server.stop)

    def test_adapter_over_http(self) -> None:
        adapter_mod = _load("blis_gepa_adapter_http_test", REPO / "integrations" / "gepa" / "adapter.py")
        adapter = adapter_mod.BlisGEPAAdapter(eval_url=self.server.url)
        adapter.check_setup()
        self.assertEqual(adapter.examples(), ["steady@1", "steady@2", "hot@3", "hot@4"])
        result = adapter.evaluate(["steady@1", "hot@3"], {"routing": ROUTE}, capture_traces=True)
        self.assertEqual(len(result.scores), 2)
        self.assertGreater(result.scores[0], 0.0)
        self.assertGreater(result.scores[1], 0.0)
        dataset = adapter.make_reflective_dataset({"routing": ROUTE}, result, ["routing"])
        self.assertEqual(len(dataset["routing"]), 2)

        # An unknown example (400, not charged) raises with the server's message.
        with self.assertRaisesRegex(adapter_mod.BlisSetupError, r"answered 400: .*steady@99"):
            adapter.evaluate(["steady@99"], {"routing": ROUTE})

        # A failing candidate is a scored 0 (charged), without latency figures.
        failed = adapter.evaluate(["steady@2"], {"routing": BROKEN}, capture_traces=True)
        self.assertEqual(failed.scores, [0.0])
        self.assertIn("POLICY_CODE", failed.trajectories[0]["error"])
        self.assertEqual(failed.trajectories[0]["objectives"], {})
        self.assertEqual(set(failed.objective_scores[0]), set(result.objective_scores[0]))
        self.assertEqual(set(failed.objective_scores[0].values()), {0.0})

        # The budget is spent: raised, since every further candidate would score 0.
        with self.assertRaisesRegex(adapter_mod.BlisSetupError, "spent its budget"):
            adapter.evaluate(["hot@4"], {"routing": ROUTE})


class NoServerTest(unittest.TestCase):
    """A server that does not answer is a set-up error."""

    def test_no_server_raises(self) -> None:
        adapter_mod = _load("blis_gepa_adapter_http_test", REPO / "integrations" / "gepa" / "adapter.py")
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        adapter = adapter_mod.BlisGEPAAdapter(eval_url="http://127.0.0.1:%d" % port, timeout_s=10)
        for call in (adapter.check_setup, adapter.examples, lambda: adapter.evaluate(["steady@1"], {"routing": ROUTE})):
            with self.assertRaisesRegex(adapter_mod.BlisSetupError, "no answer from"):
                call()


if __name__ == "__main__":
    unittest.main()
