"""The warm evaluator (integrations/blis_warm.py) behind the OpenEvolve evaluator and the GEPA adapter: one
server per set-up and process whatever the threads, restarted when it died, stopped at exit and when its process
is killed; a server that cannot start, crashes while answering or is too slow keeps the CLI's contract
(BlisSetupError with blis's line; a timeout is scored). Stand-in servers (small Python scripts) play the failures.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest
from pathlib import Path
from typing import Any, List
from unittest import mock

REPO = Path(__file__).resolve().parents[2]
ROUTE = "function route(request, state) {\n  let best = state.instances[0];\n  for (const x of state.instances) if (x.load < best.load) best = x;\n  return best.id;\n}\n"


def _load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, str(path))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


adapter_mod = _load("blis_gepa_adapter_warm_test", REPO / "integrations" / "gepa" / "adapter.py")
warm = sys.modules["blis_integrations_warm"]

#: A stand-in for `blis evaluate --serve`: MODE start-crash | start-exit2 | garbage | answer-crash | slow.
STUB = textwrap.dedent('''
    import json, os, sys, time
    from http.server import BaseHTTPRequestHandler, HTTPServer
    mode = sys.argv[1]
    if mode == "start-crash":
        sys.stderr.write("x" * 5000 + "\\nfatal: out of cheese\\n"); sys.exit(3)
    if mode == "start-exit2":
        sys.stderr.write('error: --suite: "nope" is neither a built-in suite\\n'); sys.exit(2)
    if mode == "garbage":
        print("not a server"); sys.exit(0)
    class H(BaseHTTPRequestHandler):
        def log_message(self, *a): pass
        def do_GET(self):
            body = json.dumps({"examples": ["steady@1"], "objectives": [{"name": "slo"}]}).encode()
            self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if mode == "answer-crash":
                sys.stderr.write("internal: evaluate: TypeError: x is undefined (a bug in blis)\\n"); sys.stderr.flush(); os._exit(70)
            time.sleep(60)
    s = HTTPServer(("127.0.0.1", 0), H)
    print("listening on http://127.0.0.1:%d" % s.server_address[1], flush=True)
    s.serve_forever()
''')


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:  # a zombie of ours is gone for our purposes
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def _wait_gone(pid: int, seconds: float = 15) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


class WarmServerTest(unittest.TestCase):
    def setUp(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BLIS_")}
        env["BLIS_TIMEOUT_S"] = "120"
        patcher = mock.patch.dict(os.environ, env, clear=True)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.tmp = tempfile.TemporaryDirectory(prefix="blis-warm-test-")
        self.addCleanup(self.tmp.cleanup)
        self.script = Path(self.tmp.name) / "stub_server.py"
        self.script.write_text(STUB, encoding="utf-8")

    def stub(self, mode: str) -> List[str]:
        return [sys.executable, str(self.script), mode, "--"]

    def test_one_server_for_many_threads_and_a_restart_after_it_died(self) -> None:
        adapter = adapter_mod.BlisGEPAAdapter()
        errors: List[BaseException] = []
        scores: List[float] = []

        def work() -> None:
            try:
                scores.extend(adapter.evaluate(["steady@1"], {"routing": ROUTE}).scores)
            except BaseException as e:  # noqa: BLE001 -- reported below
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(set(scores)), 1)
        mine = [s for s in warm.running_servers() if s.args == warm.server_args("routing-prefix-heavy", None, None, adapter_mod.cache_args())]
        self.assertEqual(len(mine), 1, "one server for the set-up")
        first = mine[0].proc.pid
        os.killpg(first, signal.SIGKILL) if os.name == "posix" else mine[0].proc.kill()
        mine[0].proc.wait(timeout=10)
        again = adapter.evaluate(["steady@1"], {"routing": ROUTE}).scores
        self.assertEqual(again, scores[:1], "a dead server is replaced and scores alike")
        now = [s for s in warm.running_servers() if s.args == mine[0].args]
        self.assertEqual(len(now), 1)
        self.assertNotEqual(now[0].proc.pid, first)

    def test_start_failures_raise_with_the_cli_messages(self) -> None:
        for mode, message in (
            ("start-crash", r"^blis crashed \(exit 3\): fatal: out of cheese"),
            ("start-exit2", r'^blis set-up error \(exit 2\): error: --suite: "nope" is neither a built-in suite'),
            ("garbage", r"^blis evaluate --serve printed no listening line \(exit 0\): stdout: not a server"),
        ):
            adapter = adapter_mod.BlisGEPAAdapter(blis_cmd=self.stub(mode))
            with self.assertRaisesRegex(adapter_mod.BlisSetupError, message):
                adapter.evaluate(["steady@1"], {"routing": ROUTE})
        with self.assertRaisesRegex(adapter_mod.BlisSetupError, "could not be started: cannot start /nonexistent/blis"):
            adapter_mod.BlisGEPAAdapter(blis_cmd=["/nonexistent/blis"]).check_setup()

    def test_a_crash_while_answering_raises_and_the_next_call_starts_again(self) -> None:
        adapter = adapter_mod.BlisGEPAAdapter(blis_cmd=self.stub("answer-crash"))
        for _ in range(2):
            with self.assertRaisesRegex(adapter_mod.BlisSetupError, r"^blis crashed \(exit 70\): internal: evaluate: TypeError"):
                adapter.evaluate(["steady@1"], {"routing": ROUTE})

    def test_a_slow_evaluation_is_a_scored_timeout_and_the_server_is_replaced(self) -> None:
        adapter = adapter_mod.BlisGEPAAdapter(blis_cmd=self.stub("slow"), timeout_s=1)
        started = time.monotonic()
        result = adapter.evaluate(["steady@1"], {"routing": ROUTE}, capture_traces=True)
        self.assertLess(time.monotonic() - started, 15)
        self.assertEqual(result.scores, [0.0])
        self.assertIn("timeout", result.trajectories[0]["error"])
        self.assertEqual([s for s in warm.running_servers() if s.cmd == self.stub("slow")], [], "the busy server was stopped")

    def test_the_server_stops_when_its_process_exits_or_is_killed(self) -> None:
        code = textwrap.dedent('''
            import importlib.util, os, sys, time
            spec = importlib.util.spec_from_file_location("a", %r)
            a = importlib.util.module_from_spec(spec); sys.modules["a"] = a; spec.loader.exec_module(a)
            a.BlisGEPAAdapter().check_setup()
            print(sys.modules["blis_integrations_warm"].running_servers()[0].proc.pid, flush=True)
            if sys.argv[1] == "hang":
                time.sleep(60)
        ''') % str(REPO / "integrations" / "gepa" / "adapter.py")
        for how in ("exit", "hang"):
            proc = subprocess.Popen([sys.executable, "-c", code, how], cwd=str(REPO), stdout=subprocess.PIPE, text=True, start_new_session=True)
            assert proc.stdout is not None
            pid = int(proc.stdout.readline())
            self.assertTrue(_alive(pid))
            if how == "hang":
                proc.kill()  # no atexit: the server sees its stdin close
            proc.wait(timeout=30)
            proc.stdout.close()
            self.assertTrue(_wait_gone(pid), "the server outlived its process (%s)" % how)


if __name__ == "__main__":
    unittest.main()
