#!/usr/bin/env python3
"""Reliability tests of `apiary run`, `apiary workload` and `apiary replay`: what a hostile but
ordinary user does to a tool people script around. Run by ctest (tests/harness/CMakeLists.txt),
one mode per class of failure; docs/reliability.md lists every case and what apiary does.

  outputs  apiary writes only files of its own: a device, a FIFO or an open descriptor
           (/proc/self/fd/1) is written through, never replaced; an input (config, workload) or
           another output is never an output; a link stays a link; a file beside the report is
           never taken for a temporary one.
  signals  no death by a signal: a closed stdout pipe is an error (exit 1) and the report is
           kept; SIGHUP is handled as SIGTERM (exit 129, the report marked interrupted);
           SIGINT during genesis stops it within a second or two.
  inputs   no hang and no memory blow-up on input: devices and FIFOs are refused before
           reading; counts and sizes are checked against the file and the memory; a
           workload header with absurd values is refused; a TOML file nested deeper than
           any key apiary reads is refused in bounded memory and time.
  checks   everything is checked before the run: a directory name as the report; config
           files read by the TOML spec (malformed, duplicate, unknown or mistyped keys named
           with their line) and repeated --mix/--faults kinds; a byte order mark accepted;
           an empty path refused; the mix's hard maxima and every count's upper bound stated.
  errors   errors on stderr, one line, "apiary COMMAND: ..."; the run's failure there too;
           an option given twice refused; echoed values shortened; a summary that cannot
           be written is exit 1; exit 129 documented.

The tests run as a normal user and as root. As root, device nodes are made with mknod in a
scratch directory (never the real /dev/null, which the code before these fixes replaced);
where that is not allowed the case is skipped and the output says so. Commands that could
exhaust memory run under RLIMIT_AS.
"""

import hashlib
import json
import os
import resource
import shutil
import signal
import stat
import struct
import subprocess
import sys
import threading
import time

import harness_test as h
from harness_test import Failure, check

# The most memory a command that might misbehave may map (RLIMIT_AS).
MEMORY_LIMIT = 2 << 30
# The longest error line a hostile value may produce.
LONGEST_LINE = 400


# ---- helpers ---------------------------------------------------------------------------------

def scratch(args, name):
    path = os.path.join(args.work_dir, "reliability-" + name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def apiary(args, cmd, timeout=120, limited=False, stdout=subprocess.PIPE, env=None):
    """Runs apiary to its end; a command that does not end within `timeout` s fails the test.
    `limited`: under RLIMIT_AS, except in a sanitizer build, whose shadow memory alone maps
    terabytes of address space (the test then relies on the timeout and on apiary's own checks).
    `env`: variables set on top of this process's environment."""
    limited = limited and not args.sanitizer
    try:
        return subprocess.run([args.apiary] + cmd, stdout=stdout, stderr=subprocess.PIPE, text=True,
                              timeout=timeout, cwd=args.work_dir, preexec_fn=limit_memory if limited else None,
                              env=dict(os.environ, **(env or {})))
    except subprocess.TimeoutExpired:
        raise Failure("apiary %s did not end within %d s" % (" ".join(short(c) for c in cmd), timeout)) from None


def short(text, n=60):
    return text if len(text) <= n else text[:n] + "..."


def smoke(args):
    return ["--config", os.path.join(args.source_dir, "configs", "smoke.toml")]


def errors_of(p):
    """stderr without the warnings a busy machine causes."""
    return [line for line in p.stderr.splitlines() if not line.startswith("apiary: warning: ")]


def expect_error(p, status, command, needles, what):
    lines = errors_of(p)
    check(p.returncode == status, "%s: exit status %d, expected %d; stderr: %s"
          % (what, p.returncode, status, short(p.stderr, 500)))
    check(len(lines) == 1, "%s: %d error lines on stderr, expected one: %s" % (what, len(lines), short(p.stderr, 500)))
    line = lines[0]
    prefix = "apiary %s: " % command if command else "apiary: "
    check(line.startswith(prefix), "%s: the line does not start with %r: %s" % (what, prefix, short(line, 300)))
    check(len(line) <= LONGEST_LINE, "%s: a %d-character error line" % (what, len(line)))
    for needle in needles:
        check(needle in line, "%s: the line does not say %r: %s" % (what, needle, line))
    print("%s -> exit %d: %s" % (what, p.returncode, line))
    return line


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def is_char_device(path):
    return stat.S_ISCHR(os.stat(path).st_mode)


def is_fifo(path):
    return stat.S_ISFIFO(os.lstat(path).st_mode)


def device(tmp, name, major, minor, system_path):
    """A character device to write to. As root, a node of our own in tmp: the code before these
    fixes replaced the device it was given, and the machine's /dev/null must never be that one.
    As a normal user, the system's device (which such a user cannot replace)."""
    if os.geteuid() != 0:
        return system_path if os.path.exists(system_path) else None
    path = os.path.join(tmp, name)
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
        os.close(os.open(path, os.O_WRONLY))  # a device cgroup may forbid opening it
    except (OSError, PermissionError) as e:
        if os.path.exists(path):
            os.remove(path)
        print("SKIP: cannot make a %s device node here (%s); the cases that need it are skipped" % (name, e))
        return None
    return path


def fifo_reader(path, sink):
    """Reads the FIFO to its end on a thread (opening it blocks until a writer comes)."""
    def read():
        with open(path, "rb") as f:
            sink.append(f.read())
    t = threading.Thread(target=read, daemon=True)
    t.start()
    return t


def small_workload(args, path):
    p = apiary(args, ["workload", "--out", path, "--transactions", "200", "--accounts", "200"])
    check(p.returncode == 0, "apiary workload: %s" % p.stderr)


def load_report(args, path):
    return h.load_report(path, h.load_schema(args.source_dir))


# ---- outputs ---------------------------------------------------------------------------------

def outputs_devices(args, tmp):
    null = device(tmp, "null", 1, 3, "/dev/null")
    full = device(tmp, "full", 1, 7, "/dev/full")
    if null:
        p = apiary(args, ["run"] + smoke(args) + ["--report", null])
        check(p.returncode == 0, "--report %s: exit %d: %s" % (null, p.returncode, p.stderr))
        check(is_char_device(null), "--report %s replaced the device with a file" % null)
        check(not os.path.exists(null + ".log"), "--report %s left a log file beside a device" % null)
        p = apiary(args, ["workload", "--out", null, "--transactions", "100", "--accounts", "100"])
        check(p.returncode == 0 and is_char_device(null), "workload --out %s: exit %d, still a device: %s"
              % (null, p.returncode, is_char_device(null)))
        p = apiary(args, ["run"] + smoke(args) + ["--report", os.path.join(tmp, "r0.json"), "--dump-blocks", null,
                                                  "--dump-transactions", null])
        check(p.returncode == 0 and is_char_device(null), "the dumps to %s: exit %d" % (null, p.returncode))
        print("outputs: %s written through and still a device" % null)
    if full:
        p = apiary(args, ["run"] + smoke(args) + ["--report", full])
        expect_error(p, 1, "run", ["No space left on device"], "--report " + full)
        check(is_char_device(full), "--report %s replaced the device" % full)


def outputs_inputs_and_twins(args, tmp):
    config = os.path.join(tmp, "mine.toml")
    shutil.copy(os.path.join(args.source_dir, "configs", "smoke.toml"), config)
    before = digest(config)
    p = apiary(args, ["run", "--config", config, "--report", config])
    expect_error(p, 2, "run", ["--report", "--config"], "--config X --report X")
    check(digest(config) == before, "the config file was overwritten")
    report = os.path.join(tmp, "twin.json")
    p = apiary(args, ["run"] + smoke(args) + ["--report", report, "--dump-blocks",
                                              os.path.join(tmp, ".", "twin.json")])
    expect_error(p, 2, "run", ["--dump-blocks", "--report"], "--report X --dump-blocks ./X")
    check(not os.path.exists(report), "a report was written")
    workload = os.path.join(tmp, "w.bin")
    small_workload(args, workload)
    before = digest(workload)
    p = apiary(args, ["replay", "--workload", workload, "--report", os.path.join(tmp, "..",
                                                                                os.path.basename(tmp), "w.bin")])
    expect_error(p, 2, "replay", ["--report", "--workload"], "replay --workload X --report X")
    check(digest(workload) == before, "the workload was overwritten")
    # --rc-params is read as the options are parsed: its file is an input of every command that takes it.
    params = os.path.join(tmp, "rc.toml")
    with open(params, "w") as f:
        f.write(apiary(args, ["rc-params"]).stdout)
    before = digest(params)
    for command, extra, output in (("run", smoke(args), "--report"), ("replay", [], "--report"),
                                   ("replay", [], "--save-workload"), ("snapshot", ["--blocks", "1"], "--out")):
        p = apiary(args, [command] + extra + ["--rc-params", params, output, params])
        expect_error(p, 2, command, [output, "--rc-params"], "%s --rc-params X %s X" % (command, output))
        check(digest(params) == before, "%s: the --rc-params file was overwritten by %s" % (command, output))


def outputs_beside_and_links(args, tmp):
    report = os.path.join(tmp, "r.json")
    mine = report + ".tmp"
    with open(mine, "w") as f:
        f.write("the user's own file\n")
    p = apiary(args, ["run"] + smoke(args) + ["--report", report])
    check(p.returncode == 0, "--report r.json beside r.json.tmp: exit %d: %s" % (p.returncode, p.stderr))
    check(os.path.exists(mine), "r.json.tmp, a file of the user's, was taken for a temporary file and is gone")
    with open(mine) as f:
        check(f.read() == "the user's own file\n", "r.json.tmp, a file of the user's, was overwritten")
    load_report(args, report)
    left = sorted(set(os.listdir(tmp)) - {"r.json", "r.log", "r.json.tmp"})
    check(not [f for f in left if f.startswith("r.json")], "temporary files left behind: %s" % left)
    target = os.path.join(tmp, "target.json")
    link = os.path.join(tmp, "link.json")
    os.symlink("target.json", link)
    p = apiary(args, ["run"] + smoke(args) + ["--report", link, "--log-file", "none"])
    check(p.returncode == 0, "--report LINK: exit %d: %s" % (p.returncode, p.stderr))
    check(os.path.islink(link), "--report LINK replaced the link with a file")
    load_report(args, target)
    print("outputs: a file beside the report kept; a link stays a link, its target holds the report")


def outputs_descriptor(args, tmp):
    # /proc/self/fd/1, not /dev/stdout: the code before these fixes renamed its temporary file
    # over the path it was given, and as root that would have been the machine's /dev/stdout.
    captured = os.path.join(tmp, "stdout.txt")
    with open(captured, "w") as out:
        inode = os.fstat(out.fileno()).st_ino
        p = apiary(args, ["run"] + smoke(args) + ["--report", "/proc/self/fd/1"], stdout=out)
    check(p.returncode == 0, "--report /proc/self/fd/1: exit %d: %s" % (p.returncode, p.stderr))
    check(os.stat(captured).st_ino == inode, "the file stdout was redirected to was replaced")
    with open(captured) as f:
        text = f.read()
    check(text.startswith('{"schema_version"') and "Full block cycle" in text,
          "stdout does not hold the report and then the summary: %s" % short(text, 200))
    json.loads(text[: text.index("\n") + 1])
    print("outputs: --report /proc/self/fd/1 written through the descriptor, the redirected file kept")


def outputs_fifo(args, tmp):
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    t0 = time.monotonic()
    p = apiary(args, ["run"] + smoke(args) + ["--report", fifo], timeout=60)
    expect_error(p, 2, "run", ["no reader"], "--report FIFO without a reader")
    check(is_fifo(fifo), "--report FIFO replaced the FIFO")
    check(time.monotonic() - t0 < 10 and "Full block cycle" not in p.stdout, "the run ran before the check")
    got = []
    reader = fifo_reader(fifo, got)
    time.sleep(0.3)
    p = apiary(args, ["run"] + smoke(args) + ["--report", fifo], timeout=120)
    reader.join(30)
    check(p.returncode == 0, "--report FIFO with a reader: exit %d: %s" % (p.returncode, p.stderr))
    check(is_fifo(fifo), "--report FIFO replaced the FIFO")
    check(got and json.loads(got[0])["status"] == "completed", "the reader got no report")
    print("outputs: a FIFO without a reader refused before the run; with one, the report goes through it")


def outputs_locked(args, tmp):
    """Two runs on the same output: the second is refused while the first writes, naming it;
    the first's files stay whole and no lock file is left behind."""
    report, log = os.path.join(tmp, "locked.json"), os.path.join(tmp, "locked.jsonl")
    first = subprocess.Popen([args.apiary, "run"] + smoke(args) + ["--blocks", "0", "--duration", "4s", "--report",
                                                                  report, "--interval-log", log],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=args.work_dir)
    try:
        deadline = time.monotonic() + 30
        while not os.path.exists(log) and time.monotonic() < deadline:
            time.sleep(0.05)
        check(first.poll() is None, "the first run ended before the second started")
        p = apiary(args, ["run"] + smoke(args) + ["--report", os.path.join(tmp, "other.json"), "--interval-log", log])
        expect_error(p, 2, "run", ["--interval-log", "another apiary is writing it"], "a second run on the same log")
        check(not os.path.exists(os.path.join(tmp, "other.json")), "the refused run wrote its report")
        first.communicate(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
    check(first.returncode == 0, "the first run: exit status %d" % first.returncode)
    check(all(json.loads(line) for line in open(log)), "the first run's interval log is not whole")
    left = [f for f in os.listdir(tmp) if f.endswith(".lock")]
    check(not left, "lock files left behind: %s" % left)


def plant(path, kind, victim=None):
    """Something apiary did not make at `path`: a link to `victim`, a directory, a FIFO or a file of the user's."""
    if kind == "link":
        os.symlink(victim, path)
    elif kind == "directory":
        os.mkdir(path)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        with open(path, "w") as f:
            f.write("the user's own file\n")


def snapshot_cmd(out, accounts="1000"):
    """A bare genesis written as a snapshot: the quickest command with a genesis and an output."""
    return ["snapshot", "--out", out, "--accounts", accounts]


def outputs_key_cache(args, tmp):
    """The genesis key cache writes only into files of its own: whatever else is at its file's name (a link to a
    user's file, a directory, a FIFO, a file that is no key cache) stays as it was; the genesis derives its keys
    and says so in one warning."""
    cache = os.path.join(tmp, "key-cache")
    name = os.path.join(cache, "keys-%s.bin" % hashlib.sha256(b"user\0apiary").hexdigest()[:16])
    victim = os.path.join(tmp, "victim.txt")
    for kind in ("link", "directory", "fifo", "file"):
        shutil.rmtree(cache, ignore_errors=True)
        os.makedirs(cache)
        with open(victim, "w") as f:
            f.write("keep me\n")
        plant(name, kind, victim)
        before = {p: digest(p) for p in (victim, name) if os.path.isfile(p) and not is_fifo(p)}
        p = apiary(args, snapshot_cmd(os.path.join(tmp, "kc.snap")), timeout=60, env={"APIARY_KEY_CACHE": cache})
        check(p.returncode == 0, "key cache %s: exit %d: %s" % (kind, p.returncode, p.stderr))
        warnings = [line for line in p.stderr.splitlines() if line.startswith("apiary: warning: the key cache's")]
        check(len(warnings) == 1, "key cache %s: no one-line warning: %s" % (kind, short(p.stderr, 500)))
        check(all(digest(f) == d for f, d in before.items()), "key cache %s: a file was changed" % kind)
        check(os.path.islink(name) == (kind == "link") and os.path.isdir(name) == (kind == "directory")
              and is_fifo(name) == (kind == "fifo"), "key cache %s: what was there was replaced" % kind)
        check(sorted(os.listdir(cache)) == [os.path.basename(name)], "key cache %s: left %s" % (kind,
                                                                                               os.listdir(cache)))
    # The cache's file is an input of every command that makes a genesis: no output replaces it.
    shutil.rmtree(cache)
    os.makedirs(cache)
    with open(name, "w") as f:
        f.write("the cache's own\n")
    p = apiary(args, snapshot_cmd(name), timeout=60, env={"APIARY_KEY_CACHE": cache})
    expect_error(p, 2, "snapshot", ["--out", "the genesis key cache"], "snapshot --out onto the key cache's file")
    check(open(name).read() == "the cache's own\n", "snapshot --out replaced the key cache's file")
    print("outputs: a link, a directory, a FIFO and a foreign file at the key cache's name are left as they were; "
          "an output onto the cache's file is refused")


def outputs_lock_names(args, tmp):
    """A file of the user's named like an output's lock is neither adopted nor removed: refused in one line; a lock
    a killed apiary left (its marker, not held) is taken over and removed at the end."""
    out = os.path.join(tmp, "locked.snap")
    lock = os.path.join(tmp, ".locked.snap.lock")
    victim = os.path.join(tmp, "lock-victim.txt")
    for kind in ("file", "link", "fifo"):
        with open(victim, "w") as f:
            f.write("keep me\n")
        plant(lock, kind, victim)
        before = digest(victim), (digest(lock) if kind == "file" else None)
        p = apiary(args, snapshot_cmd(out, "100"), timeout=60)
        expect_error(p, 2, "snapshot", ["--out", "no lock of apiary's"], "a %s named like the lock" % kind)
        check(os.path.lexists(lock) and before == (digest(victim), digest(lock) if kind == "file" else None),
              "a %s named like the lock was changed or removed" % kind)
        check(not os.path.exists(out), "the refused snapshot was written")
        os.remove(lock)
    with open(lock, "w") as f:
        f.write("apiary output lock\npid 1\n")
    p = apiary(args, snapshot_cmd(out, "100"), timeout=60)
    check(p.returncode == 0 and os.path.exists(out), "a lock left behind: exit %d: %s" % (p.returncode, p.stderr))
    check(not os.path.lexists(lock), "the lock left behind was not removed")
    print("outputs: a file, a link and a FIFO named like a lock refused and kept; a lock left behind taken over")


def outputs_binary_streams(args, tmp):
    """A binary output (a snapshot, a workload) is never written to a stream, where the summary would follow it:
    refused in one line before anything runs. /dev/null and files still take it."""
    captured = os.path.join(tmp, "binary-stdout")
    fifo = os.path.join(tmp, "binary-fifo")
    os.mkfifo(fifo)
    cases = [(snapshot_cmd("/dev/stdout", "100"), "snapshot", "--out"),
             (snapshot_cmd("/proc/self/fd/1", "100"), "snapshot", "--out"),
             (snapshot_cmd(fifo, "100"), "snapshot", "--out"),
             (["workload", "--out", "/dev/stdout", "--transactions", "100", "--accounts", "100"], "workload", "--out"),
             (["replay", "--save-workload", "/dev/fd/1", "--transactions", "100", "--accounts", "100"], "replay",
              "--save-workload")]
    for cmd, command, option in cases:
        with open(captured, "w") as out:
            t0 = time.monotonic()
            p = apiary(args, cmd, stdout=out, timeout=60)
        expect_error(p, 2, command, [option, "a stream", "binary file"], "%s %s %s" % (command, option, cmd[2]))
        check(os.path.getsize(captured) == 0 and time.monotonic() - t0 < 10, "%s ran before the check" % command)
    check(is_fifo(fifo), "the FIFO was replaced")
    p = apiary(args, snapshot_cmd(os.path.join(tmp, "plain.snap"), "100"), timeout=60)
    check(p.returncode == 0, "a snapshot to a file: %s" % p.stderr)
    print("outputs: %d binary outputs to a stream refused before anything ran" % len(cases))


def mode_outputs(args, _schema):
    tmp = scratch(args, "outputs")
    outputs_devices(args, tmp)
    outputs_inputs_and_twins(args, tmp)
    outputs_beside_and_links(args, tmp)
    outputs_descriptor(args, tmp)
    outputs_fifo(args, tmp)
    outputs_locked(args, tmp)
    outputs_key_cache(args, tmp)
    outputs_lock_names(args, tmp)
    outputs_binary_streams(args, tmp)


# ---- signals ---------------------------------------------------------------------------------

def signals_pipe(args, tmp):
    report = os.path.join(tmp, "piped.json")
    proc = subprocess.Popen([args.apiary, "run"] + smoke(args) + ["--report", report], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=args.work_dir)
    proc.stdout.close()  # `apiary run ... | true`
    try:
        err = proc.communicate(timeout=120)[1]
    except subprocess.TimeoutExpired:
        proc.kill()
        raise Failure("apiary run with a closed stdout did not end") from None
    check(proc.returncode == 1, "stdout closed: exit status %d, expected 1 (%s)" % (proc.returncode,
          "killed by SIGPIPE" if proc.returncode == -signal.SIGPIPE else err))
    check("apiary run: cannot write to stdout: Broken pipe" in err, "no error line for the closed stdout: %s" % err)
    check(load_report(args, report)["status"] == "completed", "the report is not kept")
    print("signals: a closed stdout is exit 1 with one line, the report kept")


def wait_for_start(report, then_s):
    """Until the run's log file beside `report` is there, then `then_s` more: it is opened just
    before the run installs its signal handlers. A fixed wait is too short for a sanitizer
    build on a loaded machine, and a signal before the handlers ends the process by it."""
    log = os.path.splitext(report)[0] + ".log"
    deadline = time.monotonic() + 60
    while not os.path.exists(log) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(then_s)


def signals_hup(args, tmp):
    report = os.path.join(tmp, "hup.json")
    proc = subprocess.Popen([args.apiary, "run"] + smoke(args) + ["--blocks", "0", "--audit", "on", "--report",
                                                                 report],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=args.work_dir)
    wait_for_start(report, 1.5)
    check(proc.poll() is None, "apiary ended before the SIGHUP")
    proc.send_signal(signal.SIGHUP)
    try:
        proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise Failure("apiary did not exit within 60 s of SIGHUP") from None
    check(proc.returncode == 129, "SIGHUP: exit status %d, expected 129" % proc.returncode)
    r = load_report(args, report)
    check(r["interrupted"] and r["stop_reason"] == "SIGHUP", "report: %s, %s" % (r["status"], r["stop_reason"]))
    check(r["audit"]["passed"] is True, "the state after SIGHUP fails the audit")
    print("signals: SIGHUP -> exit 129, report marked interrupted (SIGHUP), %d blocks" % len(r["blocks"]))


def signals_repeated(args, tmp):
    """The same signal twice at once (GNU timeout's way) is one interrupt: the report is kept;
    another signal right after the first is the user's second: exit at once, leaving the report
    marked aborted (the context and the configuration, nothing measured)."""
    # (Two different signals at once may be handled in either order, on two threads: the exit
    # status is the second one's, 130 or 143.)
    for second, status, marked in ((signal.SIGINT, (130,), "interrupted"), (signal.SIGTERM, (130, 143), "aborted")):
        report = os.path.join(tmp, "repeated-%d.json" % second)
        proc = subprocess.Popen([args.apiary, "run"] + smoke(args) + ["--blocks", "0", "--report", report],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=args.work_dir)
        wait_for_start(report, 1.5)
        check(proc.poll() is None, "apiary ended before the signals")
        proc.send_signal(signal.SIGINT)
        proc.send_signal(second)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise Failure("apiary did not exit within 60 s of two signals") from None
        what = "SIGINT then %s at once" % signal.Signals(second).name
        check(proc.returncode in status, "%s: exit status %d, expected %s" % (what, proc.returncode, status))
        check(os.path.exists(report), "%s: the report is lost" % what)
        r = load_report(args, report)
        check(r["status"] == marked, "%s: the report says %s, expected %s" % (what, r["status"], marked))
        if marked == "interrupted":
            check(r["interrupted"] and r["stop_reason"] == "SIGINT", "%s: report %s" % (what, r["stop_reason"]))
        else:
            check(r["interrupted"] and r["stop_reason"] == signal.Signals(proc.returncode - 128).name
                  and "blocks" not in r and r["config"]["report"] == report,
                  "%s: the aborted report: %s" % (what, short(json.dumps(r), 300)))
            check("marked aborted" in err, "%s: stderr does not say so: %s" % (what, short(err, 300)))
            leftovers = [f for f in os.listdir(tmp) if ".tmp-" in f]
            check(not leftovers, "%s: temporary files left: %s" % (what, leftovers))
        print("signals: %s -> exit %d, report %s" % (what, proc.returncode, marked))


def signals_genesis(args, tmp):
    report = os.path.join(tmp, "genesis.json")
    # A million accounts: tens of seconds of key derivation.
    proc = subprocess.Popen([args.apiary, "run"] + smoke(args) + ["--accounts", "1000000", "--report", report],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=args.work_dir)
    wait_for_start(report, 0.5)
    check(proc.poll() is None, "apiary ended before the SIGINT (during genesis)")
    # The derivation stops between chunks: within 2.5 s; a sanitizer's build derives a chunk several times slower
    # (3.7 s under TSan on a 2-core machine).
    limit = 10.0 if args.sanitizer else 2.5
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        proc.communicate(timeout=2 * limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise Failure("SIGINT during genesis: apiary still ran %.0f s later" % (2 * limit)) from None
    took = time.monotonic() - t0
    check(proc.returncode == 130, "SIGINT during genesis: exit status %d, expected 130" % proc.returncode)
    check(took < limit, "SIGINT during genesis: %.2f s to exit (at most %.1f s)" % (took, limit))
    r = load_report(args, report)
    check(r["interrupted"] and r["stop_reason"] == "SIGINT" and not r["blocks"], "report: %s %s, %d blocks"
          % (r["status"], r["stop_reason"], len(r["blocks"])))
    print("signals: SIGINT during genesis -> exit 130 in %.2f s, report marked interrupted" % took)


def mode_signals(args, _schema):
    tmp = scratch(args, "signals")
    signals_pipe(args, tmp)
    signals_hup(args, tmp)
    signals_repeated(args, tmp)
    signals_genesis(args, tmp)


# ---- inputs ----------------------------------------------------------------------------------

HEADER = struct.Struct("<8sIQIIB")  # magic, version, seed, streams, accounts, signed


def forged(original, tmp, name, **fields):
    """The workload with header fields replaced and a valid checksum: intact, but absurd."""
    body = bytearray(original[:-32])
    magic, version, seed, streams, accounts, signed = HEADER.unpack_from(body)
    values = dict(streams=streams, accounts=accounts)
    values.update({k: v for k, v in fields.items() if k in values})
    HEADER.pack_into(body, 0, magic, version, seed, values["streams"], values["accounts"], signed)
    if "count" in fields:
        offset = HEADER.size + 8 * 9  # one u64 per fault kind
        for _ in range(2):  # the account prefix and the key password: a 1-byte length, then the text
            offset += 1 + body[offset]
        offset += 32  # the chain id
        struct.pack_into("<Q", body, offset, fields["count"])
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(bytes(body) + hashlib.sha256(bytes(body)).digest())
    return path


def inputs_files(args, tmp):
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    empty = os.path.join(tmp, "empty.state")
    open(empty, "w").close()
    state = smoke(args) + ["--state"]
    for cmd, needle in ((["replay", "--workload", "/dev/zero"], "not a regular file"),
                        (["replay", "--workload", fifo], "not a regular file"),
                        (["run", "--config", fifo], "not a regular file"),
                        (["replay", "--workload", tmp], "a directory"),
                        (["run"] + state + [fifo], "not a regular file"),
                        (["run"] + state + ["/dev/zero"], "not a regular file"),
                        (["run"] + state + [tmp], "a directory"),
                        (["run"] + state + [empty], "truncated")):
        t0 = time.monotonic()
        p = apiary(args, cmd, timeout=20, limited=True)
        expect_error(p, 2, cmd[0], [needle], " ".join(cmd[:2]) + " " + os.path.basename(cmd[-1]))
        check(time.monotonic() - t0 < 10, "%s took %.1f s" % (" ".join(cmd), time.monotonic() - t0))


def inputs_counts(args, tmp):
    p = apiary(args, ["workload", "--out", os.path.join(tmp, "huge.bin"), "--transactions", "999999999"],
               timeout=30, limited=True)
    expect_error(p, 2, "workload", ["--transactions", "memory"], "workload --transactions 999999999")
    if args.sanitizer:
        # Ten million accounts fit this machine's memory; only the address-space limit, which a
        # sanitizer build cannot run under, makes them too many.
        print("SKIP run --accounts 10000000: a %s build runs without RLIMIT_AS" % args.sanitizer)
    else:
        p = apiary(args, ["run"] + smoke(args) + ["--accounts", "10000000", "--report", os.path.join(tmp, "a.json")],
                   timeout=30, limited=True)
        expect_error(p, 2, "run", ["--accounts", "memory"], "run --accounts 10000000 (%d GiB address space)"
                     % (MEMORY_LIMIT >> 30))
    check(not os.path.exists(os.path.join(tmp, "huge.bin")), "a workload was written")


def inputs_headers(args, tmp):
    workload = os.path.join(tmp, "w.bin")
    small_workload(args, workload)
    with open(workload, "rb") as f:
        original = f.read()
    for name, fields, needle in (("streams.bin", {"streams": 2 ** 32 - 1}, "streams"),
                                 ("no-accounts.bin", {"accounts": 0}, "accounts"),
                                 ("accounts.bin", {"accounts": 2 ** 32 - 1}, "accounts"),
                                 ("count.bin", {"count": 10 ** 12}, "claims")):
        path = forged(original, tmp, name, **fields)
        p = apiary(args, ["replay", "--workload", path], timeout=30, limited=True)
        expect_error(p, 2, "replay", [needle, name], "a workload whose header says %s" % fields)


# TOML files no line of which apiary reads: CLI11's reader took memory quadratic in a table
# header's parts (the 200 KB header below exhausted the memory, and --rc-params died with a
# bare std::bad_alloc) and dropped dotted keys of more than 256 parts; toml++ frees nested
# tables recursively, so the header would overflow its stack. The last file is as large as a
# TOML file may be and nests as deep as a line may: toml++ builds its half a million tables.
def hostile_toml():
    header = "[" + ".".join(["a"] * 100000) + "]\nx = 1\n"
    dotted = ".".join(["k"] * 300) + " = 1\n"
    widest = "".join("[t%d%s]\n" % (i, ".a" * 255) for i in range(1900))
    return [("header.toml", header, 1, "more than 256 dots, brackets and braces on one line"),
            ("dotted.toml", dotted, 1, "more than 256 dots, brackets and braces on one line"),
            ("widest.toml", widest, 1, "unknown")]


# A hostile TOML file's peak memory under RLIMIT_AS (the binary and its libraries map about
# 100 MiB before main()).
TOML_MEMORY_LIMIT = 512 << 20


def inputs_toml(args, tmp):
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (TOML_MEMORY_LIMIT, TOML_MEMORY_LIMIT))
    for name, text, line, needle in hostile_toml():
        path = write(tmp, name, text.encode())
        for cmd in (["run", "--config", path], ["rc-params", "--rc-params", path]):
            t0 = time.monotonic()
            try:
                p = subprocess.run([args.apiary] + cmd, capture_output=True, text=True, timeout=30,
                                   cwd=args.work_dir, preexec_fn=None if args.sanitizer else limit)
            except subprocess.TimeoutExpired:
                raise Failure("apiary %s %s did not end within 30 s" % (cmd[0], name)) from None
            took = time.monotonic() - t0
            expect_error(p, 2, cmd[0], ["%s:%d: " % (name, line), needle],
                         "%s %s (%d KB)" % (" ".join(cmd[:2]), name, len(text) >> 10))
            check(took < 10, "%s %s took %.1f s" % (" ".join(cmd[:2]), name, took))


CLOCK = ["replay", "--blocks-by", "clock", "--accounts", "100", "--threads", "1"]


def inputs_clock(args, tmp):
    """Slots that offer nothing: --blocks of them are that many empty blocks and the replay ends; without --blocks
    the transactions could never be offered, which is refused at once; a --blocks whose slots cannot fit is refused
    by arithmetic, naming --blocks, not after counting every slot. Each under a timeout: a hang fails the test."""
    for schedule in ("0", "poisson:1e-300", "uniform:0..0"):
        report = os.path.join(tmp, "clock.json")
        p = apiary(args, CLOCK + ["--slot-transactions", schedule, "--blocks", "5", "--report", report], timeout=60)
        check(p.returncode == 0, "--slot-transactions %s --blocks 5: exit %d: %s" % (schedule, p.returncode, p.stderr))
        with open(report) as f:
            r = json.load(f)
        blocks = r["blocks"]
        check(len(blocks) == 5 and all(b["transactions"] == 0 for b in blocks),
              "--slot-transactions %s --blocks 5: %d blocks, %s" % (schedule, len(blocks), short(json.dumps(blocks))))
        p = apiary(args, CLOCK + ["--slot-transactions", schedule], timeout=30)
        expect_error(p, 2, "replay", ["--slot-transactions " + schedule, "--blocks N"],
                     "%s without --blocks" % schedule)
    t0 = time.monotonic()
    for schedule in ("1000", "poisson:1e-300"):
        p = apiary(args, CLOCK + ["--slot-transactions", schedule, "--blocks", "100000000"], timeout=30, limited=True)
        expect_error(p, 2, "replay", ["--blocks 100,000,000", "memory"], "%s --blocks 100000000" % schedule)
    check(time.monotonic() - t0 < 20, "the memory refusals took %.1f s" % (time.monotonic() - t0))
    print("inputs: slots that offer nothing end with --blocks, are refused without; a huge --blocks refused at once")


def mode_inputs(args, _schema):
    tmp = scratch(args, "inputs")
    inputs_files(args, tmp)
    inputs_counts(args, tmp)
    inputs_headers(args, tmp)
    inputs_toml(args, tmp)
    inputs_clock(args, tmp)


# ---- checks ----------------------------------------------------------------------------------

def write(tmp, name, data):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def checks_before_the_run(args, tmp):
    newdir = os.path.join(tmp, "newdir") + "/"
    t0 = time.monotonic()
    p = apiary(args, ["run"] + smoke(args) + ["--report", newdir])
    expect_error(p, 2, "run", ["--report", "directory"], "--report newdir/")
    check("Full block cycle" not in p.stdout and time.monotonic() - t0 < 10, "the run ran before the check")
    check(not os.path.exists(newdir), "the check left the directory behind")


# Config files toml++ reads and apiary refuses: one line naming the file, the line and the key.
BAD_CONFIG_FILES = [
    ("twice.toml", b"blocks = 3\nseed = 2\nblocks = 4\n", ["twice.toml:3: ", "cannot redefine", "'blocks'"]),
    ("adjacent.toml", b"blocks = 3\nblocks = 4\n", ["adjacent.toml:2: ", "cannot redefine", "'blocks'"]),
    ("spelled.toml", b'block_size = "64KiB"\nblock-size = "128KiB"\n',
     ["spelled.toml:2: ", "duplicate key 'block-size' (lines 1 and 2)"]),
    ("help.toml", b"blocks = 3\nhelp = true\n", ["help.toml:2: ", "unknown key 'help'"]),
    ("table.toml", b"blocks = 3\n\n[colony]\nthread = 2\n", ["table.toml:4: ", "unknown key 'colony.thread'"]),
    ("dotted.toml", b"colony.threads = 2\n", ["dotted.toml:1: ", "unknown key 'colony.threads'"]),
    ("config.toml", b'config = "other.toml"\n', ["config.toml:1: ", "unknown key 'config'"]),
    ("type.toml", b"seed = 1\nsign = 1\n", ["type.toml:2: ", "'sign': expected true or false, not an integer"]),
    ("array.toml", b'report = ["a.json", "b.json"]\n', ["array.toml:1: ", "'report': expected a string, not an array"]),
    ("float.toml", b"blocks = 5.0\n", ["float.toml:1: ", "--blocks", "'5.0': expected a whole number"]),
    ("malformed.toml", b"blocks = 3\nseed = = 2\n", ["malformed.toml:2: ", "error while parsing"]),
    ("bare.toml", b"blocks = 3\nsign\n", ["bare.toml:2: ", "expected '='"]),
    ("unclosed.toml", b'name = "run\nblocks = 3\n', ["unclosed.toml:1: ", "error while parsing string"]),
]


def checks_config_files(args, tmp):
    for name, content, needles in BAD_CONFIG_FILES:
        p = apiary(args, ["run", "--config", write(tmp, name, content), "--print-config"])
        expect_error(p, 2, "run", needles, name)
    bom = write(tmp, "bom.toml", b"\xef\xbb\xbfblocks = 3\n")
    p = apiary(args, ["run", "--config", bom, "--print-config"])
    check(p.returncode == 0 and "\nblocks = 3\n" in "\n" + p.stdout, "a config file with a byte order mark: %d %s"
          % (p.returncode, p.stderr))
    print("checks: a config file with a byte order mark reads")


def checks_options(args):
    cases = [(["--mix", "vote=1,vote=2"], ["--mix", "vote: given twice"]),
             (["--faults", "expired=0.1,duplicate=0.1,expired=0.2"], ["--faults", "expired: given twice"]),
             (["--mix", "article=1:0-99999999"], ["--mix", "99999999", "60000"]),
             (["--mix", "vote=1:0-10"], ["--mix", "vote", "no extra payload"]),
             (["--blocks", "4294967295"], ["--blocks", "1000000"]),
             (["--transactions", "18446744073709551615"], ["--transactions", "1000000000000"])]
    for extra, needles in cases:
        p = apiary(args, ["run"] + smoke(args) + extra + ["--print-config"])
        expect_error(p, 2, "run", needles, " ".join(extra))


# Every option that does nothing in a mode, set away from its default there; every pair the
# options document as exclusive; values that could never produce a block; paths that name no
# file. Each is refused before anything runs, naming the option(s).
REFUSED_COMBINATIONS = [
    (["--async-tasks", "8"], ["--async-tasks 8", "only used with --submit async"]),
    (["--submit", "SYNC", "--async-tasks", "3"], ["--async-tasks 3", "not --submit sync"]),
    (["--queue-capacity", "5"], ["--queue-capacity 5", "only used with --queue bounded"]),
    (["--submit", "sync", "--queue-gather", "2ms"], ["--queue-gather", "not used with --submit sync"]),
    (["--interval", "2s"], ["--interval 2 s", "--interval-log or --prometheus-textfile"]),
    (["--dump-limit", "5"], ["--dump-limit 5", "--dump-transactions"]),
    (["--dump-block-limit", "5"], ["--dump-block-limit 5", "--dump-blocks"]),
    (["--block-budget", "100"], ["--block-budget 100", "--rate block"]),
    (["--checkpoint-blocks", "10"], ["--checkpoint-blocks 10", "--interval-log"]),
    (["--custom-ops", "State", "--reuse-pending", "on"], ["--reuse-pending on", "--custom-ops local", "state"]),
    (["--rc", "volatile", "--reuse-pending", "ON"], ["--reuse-pending on", "--rc state", "volatile"]),
    (["--genesis-vesting", "0"], ["--genesis-vesting 0", "insufficient_rc"]),
    (["--rate", "0.01"], ["--rate 0.01", "--stall-timeout 60 s"]),
    (["--report", ""], ["--report", "expected a path"]),
    (["--interval-log", ""], ["--interval-log", "expected a path"]),
    (["--log-file", "-"], ["--log-file", "'-'"]),
    (["--dump-blocks", "-"], ["--dump-blocks", "'-'"]),
]

# Every path option of every command, given an empty path: refused as the option is read, as
# any bad path (it was taken for none).
EMPTY_PATHS = [["run", "--config"], ["run", "--state"], ["run", "--rc-params"], ["run", "--hgrm-dir"],
               ["replay", "--workload"], ["replay", "--save-workload"], ["replay", "--report"],
               ["workload", "--out"], ["snapshot", "--out"], ["rc-params", "--rc-params"]]


def checks_empty_paths(args):
    for cmd in EMPTY_PATHS:
        p = apiary(args, cmd + [""])
        expect_error(p, 2, cmd[0], [cmd[1] + ": expected a path"], "%s %s ''" % tuple(cmd))


def checks_modes(args, tmp):
    for extra, needles in REFUSED_COMBINATIONS:
        p = apiary(args, ["run"] + smoke(args) + extra + ["--print-config"])
        expect_error(p, 2, "run", needles, " ".join(extra))
    # The defaults themselves pass wherever they do nothing (a config file of every option).
    p = apiary(args, ["run", "--config", os.path.join(args.source_dir, "configs", "default.toml"), "--print-config"])
    check(p.returncode == 0, "configs/default.toml: %s" % p.stderr)
    # Reuse off where it cannot apply, and the report says so; a duration kept exactly.
    p = apiary(args, ["run"] + smoke(args) + ["--custom-ops", "state", "--print-config"])
    check(p.returncode == 0 and 'reuse-pending = "off"' in p.stdout, "--custom-ops state: reuse-pending not off")
    report = os.path.join(tmp, "tiny-duration.json")
    p = apiary(args, ["run"] + smoke(args) + ["--duration", "1e-300", "--report", report])
    check(p.returncode == 0 and load_report(args, report)["config"]["duration"] == 1e-300,
          "--duration 1e-300 is not recorded as 1e-300")
    # --hgrm-dir on the report's path: refused before the run, nothing made.
    same = os.path.join(tmp, "same")
    p = apiary(args, ["run"] + smoke(args) + ["--report", same, "--hgrm-dir", same])
    expect_error(p, 2, "run", ["--hgrm-dir", "the same path as --report"], "--hgrm-dir equal to --report")
    check(not os.path.exists(same), "--hgrm-dir equal to --report: %s was made" % same)
    if not args.sanitizer:  # under RLIMIT_AS: a block size whose ids cannot fit is refused
        p = apiary(args, ["run"] + smoke(args) + ["--max-block-size", "256MiB", "--block-size", "256MiB"],
                   limited=True, timeout=30)
        expect_error(p, 2, "run", ["--block-size 268,435,456", "more than the"], "a 256 MiB block")
    print("checks: %d refused combinations, defaults pass, reuse off where it cannot apply" % len(REFUSED_COMBINATIONS))


# apiary snapshot: what would do nothing there, set away from its default, is refused naming why.
SNAPSHOT_INERT = [
    (["--rc-stats-blocks", "5"], ["--rc-stats-blocks 5", "apiary snapshot writes none"]),
    (["--rc-stats-blocks", "5", "--blocks", "3"], ["--rc-stats-blocks 5", "apiary snapshot writes none"]),
    (["--seed", "3"], ["--seed 3", "without --blocks"]),
    (["--threads", "1"], ["--threads 1", "without --blocks"]),
    (["--mix", "vote=1"], ["--mix", "without --blocks"]),
    (["--faults", "expired=0.1"], ["--faults", "without --blocks"]),
    (["--payer-weights", "vesting:1"], ["--payer-weights vesting:1", "without --blocks"]),
    (["--sign", "off"], ["--sign off", "without --blocks"]),
]


def checks_snapshot_options(args, tmp):
    out = os.path.join(tmp, "inert.snap")
    for extra, needles in SNAPSHOT_INERT:
        p = apiary(args, snapshot_cmd(out, "100") + extra, timeout=30)
        expect_error(p, 2, "snapshot", needles, "snapshot " + " ".join(extra))
        check(not os.path.exists(out), "snapshot %s: a file was written" % " ".join(extra))
    # The replay's RC archives go only into its --report.
    replay = ["replay", "--accounts", "100", "--transactions", "100", "--rc-stats-blocks", "2"]
    expect_error(apiary(args, replay, timeout=30), 2, "replay", ["--rc-stats-blocks 2", "only with --report"],
                 "replay --rc-stats-blocks without --report")
    p = apiary(args, replay + ["--report", os.path.join(tmp, "rc.json")], timeout=60)
    check(p.returncode == 0, "replay --rc-stats-blocks --report: %s" % p.stderr)
    print("checks: %d options that do nothing in apiary snapshot refused, and the replay's RC archives without "
          "--report" % len(SNAPSHOT_INERT))


def make_state(args, cmd, cwd):
    env = dict(os.environ, APIARY_BIN=args.apiary)
    try:
        return subprocess.run([os.path.join(args.source_dir, "scripts", "make-state")] + cmd, capture_output=True,
                              text=True, timeout=120, cwd=cwd, env=env)
    except subprocess.TimeoutExpired:
        raise Failure("make-state %s did not end" % " ".join(cmd)) from None


def checks_make_state(args, tmp):
    """scripts/make-state: a config relative to the caller's directory; only a snapshot or state file is "already there"
    (a mapped config makes a state file);
    a directory or a foreign file at the state's path is one line, exit 2, and stays; --blocks twice is refused."""
    state = os.path.join(tmp, "made.state")
    with open(os.path.join(tmp, "made.toml"), "w") as f:
        f.write('accounts = 100\nstate = "%s"\n' % state)
    p = apiary(args, snapshot_cmd(state, "100"), timeout=60)
    check(p.returncode == 0, "snapshot: %s" % p.stderr)
    before = digest(state)
    p = make_state(args, ["made.toml"], tmp)
    check(p.returncode == 0 and "already there" in p.stderr and digest(state) == before,
          "make-state with a relative config and its snapshot there: exit %d: %s" % (p.returncode, p.stderr))
    mapped = os.path.join(tmp, "made-mapped.state")
    with open(os.path.join(tmp, "mapped.toml"), "w") as f:
        f.write('accounts = 100\nstate-memory = "mapped"\nstate = "%s"\n' % mapped)
    for expected in ("blocks on the genesis", "already there"):
        p = make_state(args, ["mapped.toml", "--blocks", "0"], tmp)
        check(p.returncode == 0 and expected in p.stderr and open(mapped, "rb").read(8) == b"APIARYMS",
              "make-state of a mapped config: exit %d: %s" % (p.returncode, p.stderr))
    p = make_state(args, ["made.toml", "--blocks", "1", "--blocks", "2"], tmp)
    check(p.returncode == 2 and p.stderr == "make-state: --blocks is given twice; give it once\n",
          "make-state --blocks twice: exit %d: %s" % (p.returncode, p.stderr))
    os.remove(state)
    for kind in ("directory", "file"):
        plant(state, kind)
        kept = digest(state) if kind == "file" else None
        for force in ([], ["--force"]):
            p = make_state(args, ["made.toml"] + force, tmp)
            check(p.returncode == 2 and len(p.stderr.splitlines()) == 1 and p.stderr.startswith("make-state: ")
                  and "is not" in p.stderr, "make-state over a %s %s: exit %d: %s" % (kind, force, p.returncode,
                                                                                   p.stderr))
            check(os.path.isdir(state) if kind == "directory" else digest(state) == kept,
                  "make-state changed the %s at the state's path" % kind)
        shutil.rmtree(state) if kind == "directory" else os.remove(state)
    print("checks: make-state finds a relative config, makes a mapped config's state file, refuses --blocks twice, a "
          "directory and a foreign file")


def checks_nothing_made(args, tmp):
    """A run refused after its outputs' checks leaves no directory they made (the report's, --profile's); a
    directory that refuses a file is named."""
    fifo = os.path.join(tmp, "no-reader")
    os.mkfifo(fifo)
    made = os.path.join(tmp, "made")
    p = apiary(args, ["run"] + smoke(args) + ["--report", os.path.join(made, "sub", "r.json"), "--profile",
                                              os.path.join(made, "profile"), "--interval-log", fifo])
    check(p.returncode == 2, "a refused run: exit %d: %s" % (p.returncode, p.stderr))
    check(not os.path.exists(made), "a refused run left %s: %s" % (made, list(os.walk(made))))
    if os.geteuid() == 0:
        print("SKIP a read-only directory: root writes into any directory")
    else:
        ro = os.path.join(tmp, "read-only")
        os.makedirs(ro)
        os.chmod(ro, 0o555)
        p = apiary(args, ["run"] + smoke(args) + ["--report", os.path.join(ro, "r.json")])
        os.chmod(ro, 0o755)
        expect_error(p, 2, "run", ["its directory", ro], "--report in a read-only directory")
    print("checks: a refused run leaves no directory behind")


def mode_checks(args, _schema):
    tmp = scratch(args, "checks")
    checks_before_the_run(args, tmp)
    checks_config_files(args, tmp)
    checks_options(args)
    checks_modes(args, tmp)
    checks_empty_paths(args)
    checks_snapshot_options(args, tmp)
    checks_make_state(args, tmp)
    checks_nothing_made(args, tmp)


# ---- errors ----------------------------------------------------------------------------------

def errors_during_the_run(args, tmp):
    # Every transaction rejected for want of RC: nothing accepted, no block, a stall.
    for extra, needle in ((["--genesis-vesting", "1", "--stall-timeout", "1s"], "--stall-timeout"),
                          (["--fail-at-block", "3"], "injected failure at block 3")):
        report = os.path.join(tmp, "failed.json")
        p = apiary(args, ["run"] + smoke(args) + extra + ["--report", report])
        line = expect_error(p, 1, "run", ["the run failed: ", needle], "a failing run (%s)" % " ".join(extra))
        r = load_report(args, report)
        check(r["failed"] and r["error"] in line, "the report's error differs from the line: %s" % r["error"])


def errors_stdout(args, tmp):
    full = device(tmp, "full", 1, 7, "/dev/full")
    if not full:
        return
    report = os.path.join(tmp, "full-stdout.json")
    with open(full, "w") as out:
        p = apiary(args, ["run"] + smoke(args) + ["--report", report], stdout=out)
    expect_error(p, 1, "run", ["cannot write to stdout", "No space left on device"], "stdout on a full device")
    check(load_report(args, report)["status"] == "completed", "the report is not kept")
    with open(full, "w") as out:
        p = apiary(args, ["workload", "--out", os.path.join(tmp, "w.bin"), "--transactions", "100", "--accounts",
                          "100"], stdout=out)
    expect_error(p, 1, "workload", ["cannot write to stdout"], "workload's stdout on a full device")
    # The log file on a full device: the run ends, the failure is counted and is exit 1.
    report = os.path.join(tmp, "full-log.json")
    p = apiary(args, ["run"] + smoke(args) + ["--report", report, "--log-file", full])
    expect_error(p, 1, "run", ["the log", "could not be written", "No space left on device"],
                 "the log on a full device")
    log = load_report(args, report)["log"]
    check(log["write_errors"] > 0, "the report counts no log write error: %s" % log)


def errors_echoes(args, tmp):
    huge = "9" * 100000
    key = write(tmp, "key.toml", b"x" * 100000 + b" = 3\n")
    cases = [(["run", "--name", huge], "--name"), (["run", "--blocks", huge], "--blocks"),
             (["run", "--mix", huge], "--mix"), (["run", "--name", "two\nlines"], "--name"),
             (["run", "--report", os.path.join(tmp, "9" * 300 + ".json")], "--report"),
             (["run", "--config", key], "unknown key"), (["run", "--" + huge], "not expected"),
             (["workload", "--out", "w.bin", "--transactions", huge], "--transactions"),
             (["replay", "--workload", "9" * 4000], "workload")]
    for cmd, needle in cases:
        p = apiary(args, cmd)
        if cmd[1].startswith("--9"):  # CLI11's own message, before any command is known
            check(p.returncode == 2 and len(p.stderr.splitlines()) == 1 and len(p.stderr) <= LONGEST_LINE,
                  "an unknown 100,000-character option: exit %d, %d characters on stderr" % (p.returncode,
                                                                                           len(p.stderr)))
            print("an unknown 100,000-character option -> %s" % p.stderr.strip())
            continue
        expect_error(p, 2, cmd[0], [needle], "%s %s <%d characters>" % (cmd[0], needle, len(cmd[-1])))
    p = apiary(args, ["run", "--rate", "1e10"])
    expect_error(p, 2, "run", ["--rate", "above the largest rate, 1e9"], "--rate 1e10")


# A single-value option given twice, of every kind (a count, a size, a duration, a toggle, a
# choice, a text, a custom one, and the commands' own), is an error, not the last one winning.
REPEATED = [([command, option, value, option, value], command, ["%s is given 2 times; give it once" % option])
            for command, option, value in (("run", "--block-size", "64KiB"), ("run", "--duration", "2s"),
                                           ("run", "--sign", "off"), ("run", "--submit", "sync"),
                                           ("run", "--report", "r.json"), ("run", "--rate", "5000"),
                                           ("run", "--mix", "vote=1"), ("run", "--config", "c.toml"),
                                           ("replay", "--workload", "w.bin"), ("workload", "--out", "w.bin"),
                                           ("snapshot", "--blocks", "3"), ("rc-params", "--rc-scale", "2"))]


def errors_command_line(args):
    """CLI11's parse errors in apiary's words: the unknown word named, the nearest valid one."""
    cases = [([], "", ["a command is required: run, workload, replay, snapshot, rc-params or blocks"]),
             (["fly"], "", ["unknown command 'fly'",
                            "the commands are run, workload, replay, snapshot, rc-params and blocks"]),
             (["replai"], "", ["unknown command 'replai'", "did you mean replay?"]),
             (["--blocks", "3"], "", ["unknown option '--blocks' before the command"]),
             (["run", "--blockz", "3"], "run", ["unknown option '--blockz'", "did you mean --blocks?"]),
             (["run", "--seeed=4"], "run", ["unknown option '--seeed'", "did you mean --seed?"]),
             (["run", "--blocks", "1", "--blocks", "2"], "run", ["--blocks is given 2 times; give it once"]),
             *REPEATED,
             (["run", "--config"], "run", ["--config needs a value (FILE)"]),
             (["run", "3"], "run", ["unexpected argument '3'"]),
             (["replay", "--transactionz", "4"], "replay", ["did you mean --transactions?"])]
    for cmd, command, needles in cases:
        line = expect_error(apiary(args, cmd), 2, command, needles, "apiary %s" % " ".join(cmd))
        check("Required" not in line and "expected:" not in line, "CLI11's own wording: %s" % line)


def errors_documented(args):
    p = apiary(args, ["--help"])
    check(p.returncode == 0 and "129" in p.stdout and "SIGHUP" in p.stdout, "apiary --help does not document 129")
    with open(os.path.join(args.source_dir, "README.md")) as f:
        readme = f.read()
    check("**129**" in readme and "SIGHUP" in readme, "README.md does not document exit status 129")
    print("errors: exit status 129 (SIGHUP) in apiary --help and README.md")


def mode_errors(args, _schema):
    tmp = scratch(args, "errors")
    errors_during_the_run(args, tmp)
    errors_stdout(args, tmp)
    errors_echoes(args, tmp)
    errors_command_line(args)
    errors_documented(args)


def main():
    print("running as %s" % ("root" if os.geteuid() == 0 else "uid %d" % os.geteuid()))
    modes = {"outputs": mode_outputs, "signals": mode_signals, "inputs": mode_inputs, "checks": mode_checks,
             "errors": mode_errors}
    return h.run_modes(modes, __doc__)


if __name__ == "__main__":
    sys.exit(main())
