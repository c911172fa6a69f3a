"""A warm blis evaluator shared by the Python integrations (OpenEvolve's evaluator, GEPA's adapter).

Starting ``node bin/blis.js`` costs a few hundred milliseconds and a cold JIT for every evaluation. Instead, one
``blis evaluate --serve`` process per set-up (command, suite, control point, engine, cache) is started the first
time it is needed and kept for the life of the Python process:

- started lazily and thread-safely (one start per set-up even when many threads ask at once);
- its runs are remembered by the server, so a cascade's stage 2 does not simulate stage 1 again;
- restarted when it has died (the next request starts a new one);
- stopped at exit (``atexit``), and with ``--watch-stdin`` it also stops by itself when this process ends
  without cleaning up (a killed worker process): it holds the write end of the server's stdin;
- a forked child (OpenEvolve's process pool) starts its own servers; it never uses or stops its parent's.

Failures keep the CLI's contract: a server that cannot start (exit 2 and blis's ``error:`` line, another exit
code, a signal, a command that cannot start, no ``listening on`` line) or that crashes while answering raises
``BlisSetupError`` with the same messages as a failed CLI run; a request that takes longer than its timeout
kills the server (it is busy with the slow candidate) and is reported as timed out, for the caller to score 0.

Standard library only; Python 3.8+. Loaded by path by the integrations under one module name
(``blis_integrations_warm``), so every copy of an evaluator in the process shares the same servers.
"""

from __future__ import annotations

import atexit
import collections
import hashlib
import json
import os
import queue
import shlex
import signal
import socket
import subprocess
import tempfile
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Deque, Dict, List, Optional, Sequence, Tuple

REPO_ROOT = Path(__file__).resolve().parents[1]
#: How long a server may take to print ``listening on URL``.
START_TIMEOUT_S = 60.0
#: Evaluations a warm server grants (its ``--budget``): effectively unlimited.
SERVER_BUDGET = 1_000_000_000
STDERR_LINES = 400


class BlisSetupError(RuntimeError):
    """blis could not evaluate anything with this set-up (not the candidate's fault): raised, never scored."""


def warm_enabled() -> bool:
    """``BLIS_WARM`` unset or not ``0``: evaluate through a warm server (``0``: one CLI process per evaluation)."""
    return os.environ.get("BLIS_WARM", "").strip() != "0"


def blis_command(cmd: Optional[Sequence[str]] = None) -> List[str]:
    """The command prefix running blis: ``cmd``, else ``BLIS_CMD`` (shell-split), else ``node <repo>/bin/blis.js``."""
    if cmd:
        return list(cmd)
    override = os.environ.get("BLIS_CMD", "").strip()
    if override:
        return shlex.split(override)
    return ["node", str(REPO_ROOT / "bin" / "blis.js")]


def cache_args() -> List[str]:
    """``--cache DIR``: ``BLIS_CACHE_DIR`` when set (set but empty: none); else, when blis is this checkout's (no
    ``BLIS_CMD``), a temp folder named by the checkout and its build, so the suite's baseline is simulated once per
    build rather than once per process."""
    if "BLIS_CACHE_DIR" in os.environ:
        folder = os.environ["BLIS_CACHE_DIR"].strip()
        return ["--cache", folder] if folder else []
    if os.environ.get("BLIS_CMD", "").strip():
        return []
    try:
        stamp = "%s:%d" % (REPO_ROOT, (REPO_ROOT / "dist" / "cli.cjs").stat().st_mtime_ns)
    except OSError:
        return []
    return ["--cache", str(Path(tempfile.gettempdir()) / ("blis-eval-cache-" + hashlib.sha1(stamp.encode("utf-8")).hexdigest()[:12]))]


def tail(text: str, n: int) -> str:
    text = (text or "").strip()
    return text if len(text) <= n else "[...]\n" + text[-n:]


def error_line(err: str) -> str:
    """The line of blis's stderr that says what went wrong: its ``error:`` / ``internal:`` line, else an
    ``...Error: ...`` line (a Node stack), else the last line."""
    lines = [line.strip() for line in (err or "").splitlines() if line.strip()]
    for line in lines:
        if line.startswith(("error:", "internal:")):
            return line
    for line in lines:
        if line.split(":", 1)[0].split(" ", 1)[0].endswith("Error"):
            return line
    return lines[-1] if lines else ""


def setup_error(cmd: Sequence[str], code: Optional[int], out: str, err: str, no_result: str = "blis printed no JSON evaluation result (exit 0)") -> BlisSetupError:
    """The exception for a blis process that produced no result (``code`` None: it could not start)."""
    line = error_line(err)
    if code is None:
        what = "blis could not be started"
    elif code == 2:
        what = "blis set-up error (exit 2)"
    elif code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "signal %d" % -code
        what = "blis was killed by %s" % name
    elif code != 0:
        what = "blis crashed (exit %d)" % code
    else:
        what = no_result
        if not line and (out or "").strip():
            line = "stdout: " + tail(out, 300)
    parts = [what + (": " + line if line else "")]
    parts.append("command: " + " ".join(shlex.quote(c) for c in cmd))
    if code is not None and code != 2 and (err or "").strip() and err.strip() != line:
        parts.append("stderr:\n" + tail(err, 2000))
    return BlisSetupError("\n".join(parts))


def http_json(url: str, body: Optional[Dict[str, Any]], timeout_s: float) -> Tuple[int, Any]:
    """GET (``body`` None) or POST JSON; returns (status, decoded JSON or None). 0 = no answer:
    ``{"error": ..., "timeout": bool}``."""
    data = None if body is None else json.dumps(body).encode("utf-8")
    req = urllib.request.Request(url, data=data, method="GET" if body is None else "POST")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as res:  # noqa: S310 -- loopback server we started
            status, raw = res.status, res.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    except (urllib.error.URLError, OSError, ValueError) as e:
        reason = getattr(e, "reason", e)
        timed_out = isinstance(e, socket.timeout) or isinstance(reason, socket.timeout)
        return 0, {"error": "no answer from %s: %s" % (url, e), "timeout": timed_out}
    try:
        return status, json.loads(raw.decode("utf-8")) if raw else None
    except ValueError:
        return status, {"error": "not JSON: %r" % (raw[:200],)}


def kill_group(proc: "subprocess.Popen[Any]") -> None:
    """Kills the process and its children (a wrapper such as npx starts node as a child)."""
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except OSError:
        try:
            proc.kill()
        except OSError:
            pass


class _Gone(Exception):
    """The server ended before this request was sent (another request's crash or timeout): ask a new one."""


class Answer:
    """A server's answer to one request: HTTP status and JSON document, or ``timed_out``; blis's stderr meanwhile."""

    def __init__(self, status: int, doc: Any, stderr: str, timed_out: bool = False) -> None:
        self.status = status
        self.doc = doc
        self.stderr = stderr
        self.timed_out = timed_out


class WarmServer:
    """One ``blis evaluate --serve`` process (see the module docstring). Requests are sent one at a time."""

    def __init__(self, cmd: List[str], args: List[str]) -> None:
        self.cmd = cmd
        self.args = args
        self.full = cmd + args
        self.owner = os.getpid()
        self.lock = threading.Lock()
        self.url = ""
        self._stderr: Deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._stderr_count = 0
        self._stderr_lock = threading.Lock()
        self.proc: Optional["subprocess.Popen[str]"] = None
        self._stderr_thread: Optional[threading.Thread] = None

    # -- life cycle ------------------------------------------------------------------------------------------

    def start(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Starts the server; raises BlisSetupError (the CLI's messages) unless it prints ``listening on URL``."""
        try:
            proc = subprocess.Popen(
                self.full,
                cwd=str(REPO_ROOT),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                start_new_session=(os.name == "posix"),
            )
        except (OSError, ValueError) as e:
            raise setup_error(self.full, None, "", "cannot start %s: %s" % (" ".join(self.full), e))
        self.proc = proc
        self._stderr_thread = threading.Thread(target=self._drain_stderr, args=(proc,), daemon=True)
        self._stderr_thread.start()
        first: "queue.Queue[str]" = queue.Queue()
        threading.Thread(target=self._read_stdout, args=(proc, first), daemon=True).start()
        try:
            line = first.get(timeout=timeout_s)
        except queue.Empty:
            kill_group(proc)
            self._reap(proc)
            self._close_pipes()
            raise BlisSetupError("blis evaluate --serve did not start within %gs\ncommand: %s" % (timeout_s, " ".join(shlex.quote(c) for c in self.full)))
        if line.startswith("listening on "):
            self.url = line[len("listening on "):].strip().rstrip("/")
            return
        # No URL: the process ended (a set-up error, a crash) or printed something else.
        try:
            code: Optional[int] = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            self._reap(proc)
            code = 0
        self._join_stderr()
        err = self.stderr_text()
        self._close_pipes()
        raise setup_error(self.full, code, line, err, "blis evaluate --serve printed no listening line (exit 0)")

    def _join_stderr(self) -> None:
        """Waits (briefly) for the stderr reader to take the last lines of a process that ended."""
        if self._stderr_thread is not None:
            self._stderr_thread.join(timeout=2)

    def _reap(self, proc: "subprocess.Popen[str]") -> Optional[int]:
        try:
            return proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            return None

    def _close_pipes(self) -> None:
        """Closes this side of the pipes of a server that has ended (after its readers took what it wrote)."""
        proc = self.proc
        if proc is None:
            return
        self._join_stderr()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            try:
                if pipe is not None:
                    pipe.close()
            except (OSError, ValueError):
                pass

    def _read_stdout(self, proc: "subprocess.Popen[str]", first: "queue.Queue[str]") -> None:
        out = proc.stdout
        if out is None:
            first.put("")
            return
        try:
            first.put(out.readline())
            for _ in out:  # the server prints nothing more; keep the pipe drained regardless
                pass
        except (OSError, ValueError):
            first.put("")

    def _drain_stderr(self, proc: "subprocess.Popen[str]") -> None:
        err = proc.stderr
        if err is None:
            return
        try:
            for line in err:
                with self._stderr_lock:
                    self._stderr.append(line)
                    self._stderr_count += 1
        except (OSError, ValueError):
            pass

    def stderr_text(self, since: int = 0) -> str:
        """blis's stderr (the lines kept) written after line number ``since``."""
        with self._stderr_lock:
            lines = list(self._stderr)
            count = self._stderr_count
        skip = max(0, since - (count - len(lines)))
        return "".join(lines[skip:])

    def alive(self) -> bool:
        return self.proc is not None and self.url != "" and self.proc.poll() is None

    def stop(self) -> None:
        """Stops the server: closes its stdin (it stops by itself), then kills it if it lingers."""
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
            except OSError:
                pass
            try:
                proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                kill_group(proc)
                self._reap(proc)
        self._close_pipes()
        self.url = ""

    # -- requests --------------------------------------------------------------------------------------------

    def request(self, path: str, body: Optional[Dict[str, Any]], timeout_s: float) -> Answer:
        """One request. A timeout kills the server (``Answer.timed_out``); a server that died while answering raises
        BlisSetupError (a crash); other transport failures raise BlisSetupError too."""
        with self.lock:
            if not self.alive():
                raise _Gone()
            with self._stderr_lock:
                mark = self._stderr_count
            status, doc = http_json(self.url + path, body, timeout_s)
            if status != 0:
                return Answer(status, doc, self.stderr_text(mark))
            proc = self.proc
            if isinstance(doc, dict) and doc.get("timeout"):
                if proc is not None:
                    kill_group(proc)
                    self._reap(proc)
                err = self.stderr_text(mark)
                self._close_pipes()
                self.url = ""
                return Answer(0, doc, err, timed_out=True)
            # No answer: did it die?
            code: Optional[int] = None
            if proc is not None:
                try:
                    code = proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    code = None
            if code is not None:
                self._join_stderr()
            err = self.stderr_text(mark)
            self.url = ""
            if code is not None:
                self._close_pipes()
                raise setup_error(self.full, code if code != 0 else 1, "", err)
            if proc is not None:
                kill_group(proc)
                self._reap(proc)
                self._close_pipes()
            message = doc.get("error") if isinstance(doc, dict) else "no answer"
            raise BlisSetupError("the blis evaluation server did not answer %s: %s\ncommand: %s" % (path, message, " ".join(shlex.quote(c) for c in self.full)))


_REGISTRY_LOCK = threading.Lock()
_SERVERS: Dict[Tuple[str, ...], WarmServer] = {}


def server_args(suite: str, control_point: Optional[str] = None, engine: Optional[str] = None, extra: Sequence[str] = ()) -> List[str]:
    """The arguments of ``blis evaluate --serve`` for a set-up (an ephemeral loopback port, a budget no search
    spends, stopping with this process's pipe)."""
    args = ["evaluate", "--serve", "--watch-stdin", "--port", "0", "--budget", str(SERVER_BUDGET), "--suite", suite]
    if control_point:
        args += ["--control-point", control_point]
    if engine:
        args += ["--engine", engine]
    return args + list(extra)


def get_server(cmd: Sequence[str], args: Sequence[str], start_timeout_s: float = START_TIMEOUT_S) -> WarmServer:
    """The warm server of this set-up in this process: the running one, or a new one (started now)."""
    key = tuple(cmd) + ("\0",) + tuple(args)
    with _REGISTRY_LOCK:
        server = _SERVERS.get(key)
        if server is not None and server.owner == os.getpid() and server.alive():
            return server
        if server is not None and server.owner == os.getpid():
            server.stop()
        server = WarmServer(list(cmd), list(args))
        server.start(start_timeout_s)
        _SERVERS[key] = server
        return server


def ask(cmd: Sequence[str], args: Sequence[str], path: str, body: Optional[Dict[str, Any]], timeout_s: float) -> Tuple[WarmServer, Answer]:
    """One request to the warm server of a set-up (started, or replaced, as needed): (the server, its answer).

    A server that ended while this request waited for its turn (another request crashed it or timed out) is
    replaced once; a crash while answering this request raises BlisSetupError."""
    for attempt in range(2):
        server = get_server(cmd, args)
        try:
            return server, server.request(path, body, timeout_s)
        except _Gone:
            if attempt == 1:
                raise BlisSetupError("the blis evaluation server ended before answering %s\ncommand: %s" % (path, " ".join(shlex.quote(c) for c in server.full)))
    raise AssertionError("unreachable")


def running_servers() -> List[WarmServer]:
    """The servers this process started and that are running."""
    with _REGISTRY_LOCK:
        return [s for s in _SERVERS.values() if s.owner == os.getpid() and s.alive()]


def stop_all() -> None:
    """Stops every server this process started (at exit, and for tests)."""
    with _REGISTRY_LOCK:
        servers = [s for s in _SERVERS.values() if s.owner == os.getpid()]
        _SERVERS.clear()
    for s in servers:
        s.stop()


def _after_fork_in_child() -> None:
    """A forked child shares nothing with its parent's servers: fresh locks and registry, and the inherited ends of
    the parent's server pipes are closed (so the parent's servers still stop when the parent ends)."""
    global _REGISTRY_LOCK
    _REGISTRY_LOCK = threading.Lock()
    for s in list(_SERVERS.values()):
        for pipe in (s.proc.stdin, s.proc.stdout, s.proc.stderr) if s.proc is not None else ():
            try:
                if pipe is not None:
                    pipe.close()  # the child's copy only
            except (OSError, ValueError):
                pass
    _SERVERS.clear()


atexit.register(stop_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
