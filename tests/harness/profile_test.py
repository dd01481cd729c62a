#!/usr/bin/env python3
"""End-to-end tests of `apiary run --profile DIR` with the real perf and inferno's tools, run by ctest
(tests/harness/CMakeLists.txt); docs/profile.md describes the profile.

  window     a short core-only run whose genesis is long (100,000 accounts: seconds of key
             derivation) and whose window is short: the genesis functions are nowhere in
             window.folded, the audit after the run neither, while the writer's push path is there
             under the thread "writer"; every file is there and agrees with the report's profile
             section (samples, threads, top functions) and with the summary's line; a DIR holding
             an earlier profile keeps only the files that are not the profile's.
  bad-input  refused before anything runs, one line and exit 2: perf missing from PATH, DIR a
             file, DIR that cannot be made, DIR the report's path.
  tool-failure  inferno-flamegraph fails after the run: the report is written all the same and
             says what failed, stderr has it on one line, the exit status is 1, and the files
             made before the failure are there.
"""

import os
import shutil
import subprocess
import sys

import harness_test as h
from harness_test import check

# Functions only genesis runs (core/chain/src/chain_genesis.cpp and the key derivation it calls).
GENESIS_FUNCTIONS = ["apiary::core::chain::build_genesis", "apiary::core::private_key::from_login",
                     "secp256k1_ec_pubkey_create"]
# After the window: the audit walks the whole state (cycle/audit.cpp).
AFTER_WINDOW_FUNCTIONS = ["apiary::harness::audit_run"]
# The writer's push of a transaction into the core (queen/src/writer.cpp, core/chain).
PUSH_PATH = ["apiary::queen::writer::push_burst", "apiary::core::chain::push_transaction"]
TOP_HEADER = "function\tself_share\ttotal_share\tself_samples\ttotal_samples"


def scratch(args, name):
    path = os.path.join(args.work_dir, "profile-" + name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def read_folded(path):
    """[(frames, count)] of a folded file, each line "<frame>;...;<frame> <count>"."""
    out = []
    with open(path) as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            check(stack and count.isdigit(), "%s: a line that is not '<stack> <count>': %r" % (path, line[:200]))
            out.append((stack.split(";"), int(count)))
    return out


def check_files(d, report, stdout):
    p = report["profile"]
    window = read_folded(os.path.join(d, "window.folded"))
    check(sum(n for _, n in window) == p["samples"] > 0,
          "window.folded holds %d samples, the report %d" % (sum(n for _, n in window), p["samples"]))
    per_thread = {}
    for frames, n in window:
        per_thread[frames[0]] = per_thread.get(frames[0], 0) + n
    check(per_thread == p["threads"], "the threads of window.folded %s, of the report %s" % (per_thread, p["threads"]))
    for name in ("writer", "producer-0", "producer-1", "main"):
        check(name in p["threads"], "no samples of the thread %r: %s" % (name, p["threads"]))
    for name, n in p["threads"].items():
        own = read_folded(os.path.join(d, "threads", name + ".folded"))
        got = sum(c for _, c in own)
        check(got == n, "threads/%s.folded: %d samples, the report %d" % (name, got, n))
    with open(os.path.join(d, "top.tsv")) as f:
        lines = f.read().splitlines()
    check(lines[0] == TOP_HEADER, "top.tsv's header: %r" % lines[0])
    rows = [line.split("\t") for line in lines[1:]]
    check(len(rows) >= 50 and all(len(r) == 5 for r in rows), "top.tsv: %d rows, expected 50 or more" % len(rows))
    selfs = [float(r[1]) for r in rows]
    check(selfs == sorted(selfs, reverse=True), "top.tsv is not sorted by self share")
    for i, t in enumerate(p["top"]):
        check(rows[i][0] == t["function"] and abs(float(rows[i][1]) - t["self_share"]) < 1e-6,
              "the report's top %d (%s) is not top.tsv's (%s)" % (i, t["function"], rows[i][0]))
    with open(os.path.join(d, "flamegraph.svg")) as f:
        svg = f.read()
    check(svg.startswith("<?xml") and "<svg" in svg and "push_burst" in svg, "flamegraph.svg is not the window's")
    check(os.path.getsize(os.path.join(d, "perf.data")) == p["cost"]["data_bytes"] > 0, "perf.data's size")
    line = "Profile: %s: %s samples at %d Hz; most self time: " % (d, format(p["samples"], ","), p["frequency_hz"])
    check(line in stdout, "the summary has no line %r:\n%s" % (line, stdout))
    return window


def mode_window(args, schema):
    d = scratch(args, "window")
    # An earlier profile and a file of the user's: the profile's files are replaced, the rest kept.
    os.makedirs(os.path.join(d, "threads"))
    for stale in ("perf.data", "threads/producer-7.folded", "notes.txt"):
        with open(os.path.join(d, stale), "w") as f:
            f.write("earlier\n")
    report_path = os.path.join(args.work_dir, "profile-window.json")
    # Under a sanitizer the blocks slow down more than the key derivation: fewer blocks keep the
    # window shorter than genesis (15 blocks took 1.6 to 2 s under ASan, beside a genesis of 1.2
    # to 1.6 s with 20,000 to 60,000 accounts).
    accounts = "100000" if not args.sanitizer else "150000"
    blocks = "15" if not args.sanitizer else "5"
    p = h.run_apiary(args, ["run", "--config", os.path.join(args.source_dir, "configs", "smoke.toml"),
                            "--accounts", accounts, "--sign", "off", "--block-size", "2MiB-256",
                            "--blocks", blocks, "--audit", "on", "--report", report_path, "--profile", d],
                     env={"APIARY_KEY_CACHE": "off"})   # the genesis derives its keys: a long genesis, as needed
    sys.stdout.write(p.stdout)
    check(p.returncode == 0, "exit status %d, expected 0; stderr:\n%s" % (p.returncode, p.stderr))
    r = h.load_report(report_path, schema)
    prof = r["profile"]
    check(prof["dir"] == d and prof["error"] is None and prof["window_opened"], "profile: %s" % prof)
    check(prof["cost"]["control_writes"] == 2, "control writes: %s" % prof["cost"])
    check(r["config"]["profile"] == d, "config.profile %r" % r["config"]["profile"])
    genesis_s = r["timing"]["genesis_ms"] / 1e3
    check(genesis_s > r["timing"]["measured_s"],
          "genesis (%.2f s) is not longer than the window (%.2f s): the test would prove nothing"
          % (genesis_s, r["timing"]["measured_s"]))
    window = check_files(d, r, p.stdout)
    for frames, n in window:
        for f in GENESIS_FUNCTIONS + AFTER_WINDOW_FUNCTIONS:
            check(f not in frames, "%s is in the window (%d samples of %s)" % (f, n, ";".join(frames)[:300]))
    for f in PUSH_PATH:
        n = sum(c for frames, c in window if frames[0] == "writer" and f in frames)
        check(n > 0, "the writer's %s is not in the window" % f)
    check(os.path.exists(os.path.join(d, "notes.txt")), "a file not the profile's was removed")
    check(not os.path.exists(os.path.join(d, "threads", "producer-7.folded")), "an earlier thread file stayed")
    print("window: %d samples (%s) in %.2f s of window after %.2f s of genesis; none of genesis or the audit"
          % (prof["samples"], ", ".join("%s %d" % kv for kv in prof["threads"].items()), r["timing"]["measured_s"],
             genesis_s))


def expect_refused(args, extra, env, needles, what):
    report_path = os.path.join(args.work_dir, "profile-refused.json")
    if os.path.exists(report_path):
        os.remove(report_path)
    p = subprocess.run([args.apiary, "run", "--config", os.path.join(args.source_dir, "configs", "smoke.toml"),
                        "--report", report_path] + extra, capture_output=True, text=True, timeout=120,
                       cwd=args.work_dir, env=env)
    lines = [line for line in p.stderr.splitlines() if not line.startswith("apiary: warning: ")]
    check(p.returncode == 2 and len(lines) == 1 and lines[0].startswith("apiary run: --profile"),
          "%s: exit %d, stderr %r" % (what, p.returncode, p.stderr))
    for needle in needles:
        check(needle in lines[0], "%s: the line does not say %r: %s" % (what, needle, lines[0]))
    check(not os.path.exists(report_path), "%s: a report was written" % what)
    print("%s -> %s" % (what, lines[0]))


def mode_bad_input(args, schema):
    d = scratch(args, "bad")
    # PATH with inferno's tools and without perf.
    bin_dir = os.path.join(d, "bin")
    os.makedirs(bin_dir)
    for tool in ("inferno-collapse-perf", "inferno-flamegraph"):
        found = shutil.which(tool) or os.path.join(args.source_dir, ".venv", "bin", tool)
        check(os.path.exists(found), "%s is not installed (scripts/install-deps.sh installs it)" % tool)
        os.symlink(found, os.path.join(bin_dir, tool))
    env = dict(os.environ, PATH=bin_dir)
    missing_dir = os.path.join(d, "not-made")
    expect_refused(args, ["--profile", missing_dir], env, ["perf is not installed", "install-deps"], "no perf")
    check(not os.path.exists(missing_dir), "no perf: the directory was made")
    # Nothing on PATH: inferno's tools are still found in the source tree's venv if installed there.
    if not os.path.exists(os.path.join(args.source_dir, ".venv", "bin", "inferno-flamegraph")):
        expect_refused(args, ["--profile", missing_dir], dict(os.environ, PATH=d), ["inferno-flamegraph"],
                       "no flame graph tools")
    else:
        print("no flame graph tools: skipped (the venv has them, where apiary looks after PATH)")
    a_file = os.path.join(d, "a-file")
    with open(a_file, "w") as f:
        f.write("mine\n")
    expect_refused(args, ["--profile", a_file], None, ["not a directory"], "DIR a file")
    with open(a_file) as f:
        check(f.read() == "mine\n", "DIR a file: the file changed")
    expect_refused(args, ["--profile", "/proc/apiary-profile"], None, ["cannot create the directory"],
                   "DIR that cannot be made")
    same = os.path.join(d, "same")
    p = subprocess.run([args.apiary, "run", "--config", os.path.join(args.source_dir, "configs", "smoke.toml"),
                        "--report", same, "--profile", same], capture_output=True, text=True, timeout=120)
    check(p.returncode == 2 and "--profile" in p.stderr and "--report" in p.stderr and not os.path.exists(same),
          "DIR the report's path: exit %d, stderr %r" % (p.returncode, p.stderr))
    print("DIR the report's path -> %s" % p.stderr.strip())


def mode_tool_failure(args, schema):
    d = scratch(args, "failure")
    bin_dir = scratch(args, "failure-bin")
    for tool in ("perf", "inferno-collapse-perf"):
        found = shutil.which(tool) or os.path.join(args.source_dir, ".venv", "bin", tool)
        check(os.path.exists(found), "%s is not installed (scripts/install-deps.sh installs it)" % tool)
        os.symlink(found, os.path.join(bin_dir, tool))
    # Found on PATH before the venv's: a flame graph tool that fails.
    fake = os.path.join(bin_dir, "inferno-flamegraph")
    with open(fake, "w") as f:
        f.write("#!/bin/sh\necho 'cannot draw' >&2\nexit 3\n")
    os.chmod(fake, 0o755)
    report_path = os.path.join(args.work_dir, "profile-failure.json")
    if os.path.exists(report_path):
        os.remove(report_path)
    p = subprocess.run([args.apiary, "run", "--config", os.path.join(args.source_dir, "configs", "smoke.toml"),
                        "--report", report_path, "--profile", d], capture_output=True, text=True, timeout=600,
                       cwd=args.work_dir, env=dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"]))
    lines = [line for line in p.stderr.splitlines() if not line.startswith("apiary: warning: ")]
    expected = "apiary run: --profile %s: inferno-flamegraph: exit status 3: cannot draw" % d
    check(p.returncode == 1 and lines == [expected],
          "exit %d, stderr %r; expected 1 and %r" % (p.returncode, p.stderr, expected))
    r = h.load_report(report_path, schema)
    check(r["status"] == "completed" and r["profile"]["error"] == "inferno-flamegraph: exit status 3: cannot draw",
          "the report's status %s, profile.error %r" % (r["status"], r["profile"]["error"]))
    check(r["profile"]["samples"] > 0 and os.path.getsize(os.path.join(d, "window.folded")) > 0,
          "the stacks made before the failure are missing")
    check(not os.path.exists(os.path.join(d, "flamegraph.svg")), "a flame graph was written")
    check("FAILED: inferno-flamegraph: exit status 3" in p.stdout, "the summary does not say what failed:\n" + p.stdout)
    print("tool failure -> exit 1: %s" % lines[0])


def main():
    return h.run_modes({"window": mode_window, "bad-input": mode_bad_input, "tool-failure": mode_tool_failure},
                       __doc__)


if __name__ == "__main__":
    sys.exit(main())
