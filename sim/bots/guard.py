"""The guard of one bot process: run as a script (standard library only), never imported.

``python -I -S guard.py CONFIG -- COMMAND...``: the runner starts this guard, which starts the
bot and outlives it by the time it takes to clean up. It

* asks the kernel for a signal when the runner dies (``PR_SET_PDEATHSIG``: kill -9 of the
  runner included) and becomes a *subreaper* (``PR_SET_CHILD_SUBREAPER``), so every process the
  bot leaves behind (a daemon that forked twice, a ``setsid`` child) becomes its child;
* starts the bot with the bot's standard input and output (the guard keeps neither; when
  CONFIG names ``fds``, on those descriptors instead of 0 and 1, with ``/dev/null`` on 0 and 1:
  bubblewrap's own processes keep their 0 and 1, the sandboxed program alone gets the others,
  see ``sim/bots/sandbox.py``), in its own process group, under the rlimits of CONFIG
  (address space, CPU seconds, open files, processes, file size, no core file), as another
  user if CONFIG says so;
* copies the bot's standard error to the log file of CONFIG, up to its size bound;
* when the bot exits, the runner asks (SIGTERM) or the runner dies, kills every process
  below it (SIGKILL, repeated until none is left) and exits with the bot's status.
"""

import json
import os
import resource
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def prctl(option, value):
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def descendants(root):
    """Every process below ``root`` (from /proc: parent of each)."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rfind(b")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(name))
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), ()):
            out.append(c)
            todo.append(c)
    return out


def kill_all(me, pgid):
    """SIGKILL the bot's group and every process below the guard until none is left."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
    for _ in range(200):
        left = descendants(me)
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        while True:  # reap what died (the orphans are ours: subreaper)
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
        time.sleep(0.005)


def copy_log(fd, path, limit):
    """Standard error of the bot into ``path``, at most ``limit`` bytes (the rest read and
    dropped, so the bot never blocks on it)."""
    kept = 0
    out = open(path, "ab") if path else None
    try:
        while True:
            data = os.read(fd, 65536)
            if not data:
                break
            if out is not None and kept < limit:
                part = data[:limit - kept]
                out.write(part)
                out.flush()
                kept += len(part)
                if kept >= limit:
                    out.write(b"\n[standard error cut at %d bytes]\n" % limit)
                    out.flush()
    finally:
        if out is not None:
            out.close()


class Stop(Exception):
    pass


def on_term(signum, frame):
    raise Stop


def main():
    cfg = json.loads(sys.argv[1])
    argv = sys.argv[sys.argv.index("--") + 1:]
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the runner's to handle
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != cfg["parent"]:  # the runner died before the line above
        return 1
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    me = os.getpid()
    log_r = None
    if cfg.get("log"):
        log_r, log_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the bot
        try:
            os.setpgid(0, 0)
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # should the guard itself be killed
            if log_r is not None:
                os.dup2(log_w, 2)
                os.close(log_r)
                os.close(log_w)
            if cfg.get("fds"):  # bubblewrap: the pipes on these, /dev/null on 0 and 1
                fd_in, fd_out = cfg["fds"]
                os.dup2(0, fd_in)
                os.dup2(1, fd_out)
                null = os.open(os.devnull, os.O_RDWR)
                os.dup2(null, 0)
                os.dup2(null, 1)
                os.close(null)
            for res, value in cfg["rlimits"]:
                try:
                    resource.setrlimit(getattr(resource, res), (value, value))
                except (ValueError, OSError):
                    pass
            if cfg.get("gid") is not None:
                os.setgroups([])
                os.setgid(cfg["gid"])
            if cfg.get("uid") is not None:
                os.setuid(cfg["uid"])
            for k, v in cfg.get("env", {}).items():
                os.environ[k] = v
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.execvp(argv[0], argv)
        except BaseException as e:
            try:
                os.write(2, f"shuangkou guard: cannot start {argv[0]!r}: {e}\n".encode())
            finally:
                os._exit(127)
    # the guard keeps neither end of the bot's messages: the runner sees EOF when the bot dies
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    copier = None
    if log_r is not None:
        os.close(log_w)
        copier = threading.Thread(target=copy_log, args=(log_r, cfg["log"], cfg["log_bytes"]),
                                  daemon=True)
        copier.start()
    status = 0
    try:
        while True:
            try:
                got, st = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            if got == pid:
                status = os.waitstatus_to_exitcode(st)
                break
    except Stop:
        status = -signal.SIGTERM
    kill_all(me, pid)
    if copier is not None:
        copier.join(0.5)  # the last lines of the log (its writers are gone now)
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main())
