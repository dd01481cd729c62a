#!/usr/bin/env python3
"""End-to-end tests of chain state snapshots (docs/snapshots.md), run by ctest.

  use        `apiary snapshot --blocks 20` writes a snapshot, the same bytes twice; loading it and writing it
             again gives the same bytes; `apiary replay --state` and `apiary run --state --blocks 5 --audit on`
             start from its head block and name it (path, digest, head block, load time) in their reports,
             which match the schema.
  refusals   a truncated or corrupted snapshot, one made with other genesis options, --state with --workload,
             an --out that cannot be written: exit status 2, one line naming the problem, no output written.
  interrupt  SIGINT while the blocks are made: exit status 130, one line, and no file (nor a temporary one)
             where --out points.
  mapped     `apiary snapshot --state-memory mapped` writes a state file (APIARYMS); run and replay --state map it
             and go on from its head (the report says "state file", mapped, its open and prefault times); its bytes
             never change: after a run, after two runs at once, after SIGINT and after SIGKILL. A snapshot loads
             into a mapped chain (converted); the state file's refusals are one line each; a disk that fills
             while one is written leaves no file.
  cache      `run --state-blocks 20` makes the state in the state cache once and opens it after (with other
             switches too; other pools make their own), as `snapshot --to-cache` and make-state find it; another
             build's layout is named and left; a damaged state is made again; two runs at once make it once; SIGINT
             while it is made leaves nothing; its refusals are one line each.
  verify     `snapshot --verify` checks a state file and a snapshot whole; damaged, truncated, empty, directory and
             FIFO files are one line and exit 1.
"""

import hashlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time

import harness_test as ht

# smoke.toml's genesis and block size, so `run --config smoke.toml --state` fits the snapshot.
SMALL = ["--accounts", "1000", "--block-size", "64KiB"]


def path_in(args, name):
    p = os.path.join(args.work_dir, name)
    if os.path.exists(p):
        os.remove(p)
    return p


def make_snapshot(args, out, *extra):
    p = ht.run_apiary(args, ["snapshot", "--out", out, *SMALL, *extra])
    ht.check(p.returncode == 0, "snapshot: exit status %d; stderr:\n%s" % (p.returncode, p.stderr))
    ht.check(os.path.exists(out), "snapshot: no file at %s" % out)
    return p.stdout


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def damaged(args, name, data, cut=None, flip=None, mask=0x01):
    """A copy of data in the work directory, cut to `cut` bytes or with byte `flip` xor `mask`."""
    out = path_in(args, name)
    if flip is not None:
        data = data[:flip] + bytes([data[flip] ^ mask]) + data[flip + 1:]
    with open(out, "wb") as f:
        f.write(data[:cut] if cut is not None else data)
    return out


def check_state(ctx, snapshot, head):
    s = ctx.get("state")
    ht.check(isinstance(s, dict), "the report's context does not name the snapshot: %s" % s)
    ht.check(s["path"] == snapshot and s["head_block_num"] == head and s["bytes"] == os.path.getsize(snapshot)
             and len(s["state_digest"]) == 64 and s["load_ms"] >= 0, "context.state: %s" % s)
    return s


def mode_use(args, schema):
    snap = path_in(args, "s20.snap")
    stdout = make_snapshot(args, snap, "--blocks", "20")
    ht.check("head block 20 " in stdout, "snapshot: %s" % stdout)
    again = path_in(args, "s20-again.snap")
    make_snapshot(args, again, "--blocks", "20")
    ht.check(read_bytes(snap) == read_bytes(again), "the same options wrote different snapshots")
    # Loaded and written again: the very same state, next ids and head.
    resaved = path_in(args, "s20-resaved.snap")
    make_snapshot(args, resaved, "--state", snap)
    ht.check(read_bytes(snap) == read_bytes(resaved), "a loaded snapshot wrote other bytes")

    report = path_in(args, "replay.json")
    p = ht.run_apiary(args, ["replay", "--state", snap, *SMALL, "--transactions", "3000", "--report", report])
    ht.check(p.returncode == 0, "replay --state: exit status %d; stderr:\n%s" % (p.returncode, p.stderr))
    with open(report) as f:
        r = json.load(f)
    s = check_state(r["context"], snap, 20)
    ht.check(s["state_digest"] in stdout, "the replay's snapshot digest is not the one written: %s" % s)
    ht.check(r["config"]["state"] == snap, "the replay's config does not name --state: %s" % r["config"].get("state"))
    res = r["result"]
    ht.check(res["rejected"] == 0 and res["head_block_num"] > 20 and r["blocks"][0]["num"] == 21,
             "the replay did not go on from block 20: %s" % res)

    report = path_in(args, "run.json")
    p = ht.run_apiary(args, ["run", "--config", os.path.join(args.source_dir, "configs", "smoke.toml"), "--state", snap,
                             "--blocks", "5", "--warmup-blocks", "1", "--audit", "on", "--report", report])
    ht.check(p.returncode == 0, "run --state: exit status %d; stderr:\n%s" % (p.returncode, p.stderr))
    r = ht.load_report(report, schema)
    check_state(r["context"], snap, 20)
    ht.check(r["config"]["state"] == snap, "the run's config does not name --state")
    ht.check(r["blocks"][0]["num"] == 21 and r["audit"]["passed"] and r["timing"]["genesis_ms"] == 0,
             "the run did not go on from block 20, or its audit failed: first block %d, audit %s"
             % (r["blocks"][0]["num"], r["audit"]))
    ht.check("snapshot %s (head block 20) loaded" % snap in p.stdout, "the summary does not name the snapshot")
    print("use: a 20-block snapshot of %d bytes, the same twice and after a load; replay and run went on from it"
          % os.path.getsize(snap))


def one_line_refusal(args, cmd, words, absent=None):
    p = ht.run_apiary(args, cmd)
    lines = p.stderr.strip().splitlines()
    ht.check(p.returncode == 2, "%s: exit status %d, expected 2; stderr:\n%s" % (" ".join(cmd), p.returncode, p.stderr))
    ht.check(len(lines) == 1 and all(w in lines[0] for w in words),
             "%s: expected one line with %s; stderr:\n%s" % (" ".join(cmd), words, p.stderr))
    if absent:
        ht.check(not os.path.exists(absent), "%s: %s was written" % (" ".join(cmd), absent))
    return lines[0]


def mode_refusals(args, schema):
    snap = path_in(args, "refused.snap")
    make_snapshot(args, snap, "--blocks", "3")
    data = read_bytes(snap)
    truncated = damaged(args, "truncated.snap", data, cut=len(data) // 2)
    corrupted = damaged(args, "corrupted.snap", data, flip=1000, mask=0xFF)
    report = path_in(args, "refused.json")
    smoke = ["--config", os.path.join(args.source_dir, "configs", "smoke.toml"), "--report", report]
    seen = [
        one_line_refusal(args, ["run", *smoke, "--state", truncated], ["--state", "truncated"], report),
        one_line_refusal(args, ["replay", *SMALL, "--state", truncated, "--report", report], ["truncated"], report),
        one_line_refusal(args, ["run", *smoke, "--state", corrupted], ["corrupted", "checksum"], report),
        one_line_refusal(args, ["run", *smoke, "--state", snap, "--accounts", "2000"],
                         ["genesis_accounts=1000", "genesis_accounts=2000"], report),
        one_line_refusal(args, ["run", *smoke, "--state", snap, "--cashout-blocks", "50"], ["cashout_blocks="], report),
        one_line_refusal(args, ["run", *smoke, "--state", os.path.join(args.work_dir, "missing.snap")],
                         ["no such file"], report),
        one_line_refusal(args, ["replay", *SMALL, "--state", snap, "--workload", snap], ["--workload"], report),
    ]
    out = path_in(args, "never.snap")
    seen.append(one_line_refusal(args, ["snapshot", *SMALL, "--state", truncated, "--out", out], ["truncated"], out))
    seen.append(one_line_refusal(args, ["snapshot", *SMALL, "--out", args.work_dir], ["--out", "directory"]))
    seen.append(one_line_refusal(args, ["snapshot", *SMALL, "--out", "/proc/version/x.snap"], ["--out"]))
    seen.append(one_line_refusal(args, ["snapshot", *SMALL, "--out", snap, "--state", snap], ["--out", "--state"]))
    ht.check(read_bytes(snap) == data, "a refused command changed the snapshot")
    print("refusals:\n  " + "\n  ".join(seen))


def mode_interrupt(args, schema):
    out = path_in(args, "snapshot-interrupted.snap")
    cmd = [args.apiary, "snapshot", "--out", out, *SMALL, "--blocks", "1000000"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=args.work_dir)
    time.sleep(2.0)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    ht.check(proc.returncode == 130, "exit status %d, expected 130; stderr:\n%s" % (proc.returncode, stderr))
    errors = [line for line in stderr.splitlines() if "interrupted" in line]
    ht.check(len(errors) == 1 and "SIGINT" in errors[0] and "nothing written" in errors[0], "stderr:\n%s" % stderr)
    ht.check(stdout == "", "stdout after an interrupt: %s" % stdout)
    left = [n for n in os.listdir(args.work_dir) if n.lstrip(".").startswith("snapshot-interrupted")]
    ht.check(not left, "an interrupted snapshot left %s" % left)
    print("interrupt: %s" % errors[0])


def digest_of(path):
    return hashlib.sha256(read_bytes(path)).hexdigest()


def check_mapped_run(args, schema, state, report, *extra, fmt="state file"):
    smoke = os.path.join(args.source_dir, "configs", "smoke.toml")
    p = ht.run_apiary(args, ["run", "--config", smoke, "--state", state, "--blocks", "5", "--warmup-blocks", "1",
                             "--audit", "on", "--report", report, *extra])
    ht.check(p.returncode == 0, "run --state (a state file): exit status %d; stderr:\n%s" % (p.returncode, p.stderr))
    r = ht.load_report(report, schema)
    s = check_state(r["context"], state, 20)
    ht.check(s["format"] == fmt and s["open_ms"] >= 0 and s["prefault_ms"] >= 0, "context.state: %s" % s)
    ht.check(r["config"]["state-memory"] == "mapped", "a state file ran %s" % r["config"]["state-memory"])
    ht.check(r["blocks"][0]["num"] == 21 and r["audit"]["passed"], "the run did not go on from block 20, or its "
             "audit failed: first block %d, audit %s" % (r["blocks"][0]["num"], r["audit"]))
    ht.check("%s %s (head block 20) loaded" % (fmt, state) in p.stdout, "the summary does not name the state file")
    return r


def interrupted_run(args, state, sig):
    smoke = os.path.join(args.source_dir, "configs", "smoke.toml")
    cmd = [args.apiary, "run", "--config", smoke, "--state", state, "--blocks", "1000000", "--report",
           path_in(args, "mapped-%d.json" % sig)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=args.work_dir)
    time.sleep(3.0)
    proc.send_signal(sig)
    proc.communicate(timeout=120)
    return proc.returncode


def mode_mapped(args, schema):
    state = path_in(args, "s20.state")
    stdout = make_snapshot(args, state, "--blocks", "20", "--state-memory", "mapped")
    ht.check(read_bytes(state)[:8] == b"APIARYMS", "snapshot --state-memory mapped did not write a state file")
    ht.check("head block 20 " in stdout, "snapshot: %s" % stdout)
    digest = digest_of(state)
    r = check_mapped_run(args, schema, state, path_in(args, "mapped.json"), "--state-verify", "on")
    ht.check(r["context"]["state"]["verify_ms"] > 0, "--state-verify on took no time: %s" % r["context"]["state"])
    ht.check(digest_of(state) == digest, "a run changed the state file")

    smoke = os.path.join(args.source_dir, "configs", "smoke.toml")
    two = [subprocess.Popen([args.apiary, "run", "--config", smoke, "--state", state, "--blocks", "5", "--report",
                             path_in(args, "together-%d.json" % i)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=args.work_dir) for i in range(2)]
    for proc in two:
        _, stderr = proc.communicate(timeout=300)
        ht.check(proc.returncode == 0, "two runs on one state file: exit status %d; stderr:\n%s"
                 % (proc.returncode, stderr))
    ht.check(interrupted_run(args, state, signal.SIGINT) == 130, "a run stopped by SIGINT did not exit 130")
    ht.check(interrupted_run(args, state, signal.SIGKILL) == -signal.SIGKILL, "SIGKILL did not kill the run")
    ht.check(digest_of(state) == digest, "two runs at once, SIGINT or SIGKILL changed the state file")

    report = path_in(args, "mapped-replay.json")
    p = ht.run_apiary(args, ["replay", "--state", state, *SMALL, "--transactions", "3000", "--report", report])
    ht.check(p.returncode == 0, "replay --state (a state file): exit status %d; stderr:\n%s" % (p.returncode, p.stderr))
    with open(report) as f:
        res = json.load(f)
    ht.check(res["blocks"][0]["num"] == 21 and res["result"]["rejected"] == 0, "the replay did not go on from 20")

    snap = path_in(args, "s20-for-mapped.snap")
    make_snapshot(args, snap, "--blocks", "20")
    check_mapped_run(args, schema, snap, path_in(args, "converted.json"), "--state-memory", "mapped", fmt="snapshot")
    ht.check(digest_of(state) == digest, "the state file changed")
    print("mapped: a state file of %d bytes, opened in %.1f ms (prefault %.1f ms), unchanged after runs, two at once, "
          "SIGINT and SIGKILL" % (os.path.getsize(state), r["context"]["state"]["open_ms"],
                                  r["context"]["state"]["prefault_ms"]))
    mapped_refusals(args, state)
    full_disk(args)


def full_disk(args):
    """A disk that fills while a state file is written (a file size limit: writes fail with EFBIG, as on a full
    disk) is one line and exit 1, and leaves no file, nor a temporary one."""
    out = path_in(args, "full.state")

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (2 << 20, 2 << 20))

    p = subprocess.run([args.apiary, "snapshot", "--out", out, *SMALL, "--blocks", "20", "--state-memory", "mapped"],
                       capture_output=True, text=True, cwd=args.work_dir, timeout=300, preexec_fn=limited)
    errors = [line for line in p.stderr.splitlines() if line.startswith("apiary snapshot: ") and "cannot" in line]
    left = [n for n in os.listdir(args.work_dir) if "full.state" in n]
    ht.check(p.returncode == 1 and len(errors) == 1 and "full.state" in errors[0] and not left,
             "a state file that did not fit: exit %d, left %s; stderr:\n%s" % (p.returncode, left, p.stderr))
    print("full disk: %s" % errors[0])


def mapped_refusals(args, state):
    data = read_bytes(state)
    truncated = damaged(args, "truncated.state", data, cut=len(data) // 2)
    header = damaged(args, "header.state", data, flip=40)  # the header's sizes
    content = damaged(args, "content.state", data, flip=len(data) - 64)  # the last objects
    report = path_in(args, "mapped-refused.json")
    smoke = ["--config", os.path.join(args.source_dir, "configs", "smoke.toml"), "--report", report]
    seen = [
        one_line_refusal(args, ["run", *smoke, "--state", state, "--state-memory", "heap"],
                         ["is a state file", "--state-memory heap"], report),
        one_line_refusal(args, ["run", *smoke, "--state-prefault", "off"], ["--state-prefault off", "--state FILE"],
                         report),
        one_line_refusal(args, ["run", *smoke, "--state-verify", "on"], ["--state-verify on", "--state FILE"], report),
        one_line_refusal(args, ["run", *smoke, "--state", truncated], ["--state", "truncated"], report),
        one_line_refusal(args, ["run", *smoke, "--state", header], ["--state", "header", "damaged"], report),
        one_line_refusal(args, ["run", *smoke, "--state", content, "--state-verify", "on"],
                         ["--state", "does not match its digest"], report),
        one_line_refusal(args, ["run", *smoke, "--state", state, "--accounts", "2000"],
                         ["genesis_accounts=1000", "genesis_accounts=2000"], report),
    ]
    ht.check(read_bytes(state) == data, "a refused command changed the state file")
    print("mapped refusals:\n  " + "\n  ".join(seen))


def fresh_cache(args, name):
    """An empty state cache directory of the test's own, and the environment that names it."""
    cache = os.path.join(args.work_dir, name)
    shutil.rmtree(cache, ignore_errors=True)
    return cache, {"APIARY_STATE_CACHE": cache}


def cached_files(cache, suffix=".state"):
    return sorted(n for n in os.listdir(cache) if n.endswith(suffix)) if os.path.isdir(cache) else []


def cache_run(args, schema, env, name, *extra):
    """`run --state-blocks 20` from the cache: its report's context.state and its stderr."""
    report = path_in(args, name + ".json")
    smoke = os.path.join(args.source_dir, "configs", "smoke.toml")
    p = ht.run_apiary(args, ["run", "--config", smoke, "--state-blocks", "20", "--blocks", "3", "--warmup-blocks",
                             "1", "--audit", "on", "--progress", "off", "--report", report, *extra], env=env)
    ht.check(p.returncode == 0, "run --state-blocks 20 (%s): exit status %d; stderr:\n%s" % (name, p.returncode,
                                                                                             p.stderr))
    r = ht.load_report(report, schema)
    s = r["context"]["state"]
    ht.check(s["format"] == "state file" and s["head_block_num"] == 20 and r["blocks"][0]["num"] == 21
             and r["audit"]["passed"] and r["config"]["state-blocks"] == 20, "%s: context.state %s" % (name, s))
    return s, p.stderr


def mode_cache(args, schema):
    cache, env = fresh_cache(args, "state-cache")
    first, err = cache_run(args, schema, env, "cache-first")
    ht.check("making" in err and os.path.dirname(first["path"]) == cache, "the first run did not make the state in "
             "the cache: %s\n%s" % (first, err))
    digest = digest_of(first["path"])
    # The chain's switches share the state; the pools and the genesis do not.
    again, err = cache_run(args, schema, env, "cache-again", "--dedup", "unified", "--rc", "volatile")
    ht.check("making" not in err and again["path"] == first["path"] and again["state_digest"] == first["state_digest"],
             "a second run with other switches did not open the cached state: %s\n%s" % (again, err))
    ht.check(digest_of(first["path"]) == digest, "a run changed the cached state")
    pools, err = cache_run(args, schema, env, "cache-pools", "--pool-objects", "off")
    ht.check("making" in err and pools["path"] != first["path"] and pools["state_digest"] == first["state_digest"],
             "--pool-objects off did not make a state of its own (with the same digest): %s" % pools)
    # `apiary snapshot --to-cache` names the same state; make-state with a state-blocks config too.
    p = ht.run_apiary(args, ["snapshot", *SMALL, "--blocks", "20", "--to-cache"], env=env)
    ht.check(p.returncode == 0 and "already there" in p.stdout and p.stdout.strip().endswith(first["path"]),
             "snapshot --to-cache: exit %d: %s%s" % (p.returncode, p.stdout, p.stderr))
    config = path_in(args, "cached.toml")
    with open(config, "w") as f:
        f.write('accounts = 1000\nblock-size = "64KiB"\nstate-blocks = 20\n')
    make_state = os.path.join(args.source_dir, "scripts", "make-state")
    p = subprocess.run([make_state, config], capture_output=True, text=True, cwd=args.work_dir, timeout=300,
                       env=dict(os.environ, APIARY_BIN=args.apiary, **env))
    ht.check(p.returncode == 0 and p.stdout.strip().endswith(first["path"]), "make-state of a state-blocks config: "
             "exit %d: %s%s" % (p.returncode, p.stdout, p.stderr))
    p = subprocess.run([make_state, config, "--force"], capture_output=True, text=True, cwd=args.work_dir,
                       timeout=60, env=dict(os.environ, APIARY_BIN=args.apiary, **env))
    ht.check(p.returncode == 2 and "--force" in p.stderr, "make-state --force of a cached state: %s" % p.stderr)
    ht.check(first["made_ms"] > 0 and again["made_ms"] == 0, "made_ms: %s, then %s" % (first, again))
    cache_multirun(args, env, first)
    print("cache: made once (%d bytes), then opened by a run with other switches, snapshot --to-cache, make-state and "
          "multirun; other pools made their own" % os.path.getsize(first["path"]))
    cache_layouts_and_damage(args, schema, env, cache, first)
    cache_refusals(args, env)


def cache_multirun(args, env, first):
    """scripts/multirun over a state-blocks config: every run opens the cached state, none makes it."""
    out = os.path.join(args.work_dir, "cache-multirun")
    shutil.rmtree(out, ignore_errors=True)
    smoke = os.path.join(args.source_dir, "configs", "smoke.toml")
    p = subprocess.run([os.path.join(args.source_dir, "scripts", "multirun"), "--runs", "2", "--apiary", args.apiary,
                        "--out", out, "--quiet", "--", "--config", smoke, "--state-blocks", "20", "--blocks", "3",
                        "--warmup-blocks", "1"], capture_output=True, text=True, cwd=args.work_dir, timeout=600,
                       env=dict(os.environ, **env))
    ht.check(p.returncode == 0, "multirun on --state-blocks: exit %d: %s" % (p.returncode, p.stderr))
    states = []
    for root, _, files in os.walk(out):
        for name in files:
            if name.endswith(".json"):
                with open(os.path.join(root, name)) as f:
                    r = json.load(f)
                if isinstance(r, dict) and isinstance(r.get("context"), dict) and r["context"].get("state"):
                    states.append(r["context"]["state"])
    ht.check(len(states) >= 2 and all(s["path"] == first["path"] and s["made_ms"] == 0 for s in states),
             "multirun's runs did not both open the cached state: %s" % states)


def cache_layouts_and_damage(args, schema, env, cache, first):
    """A state of another build's layout is named and left; a damaged one is made again; two runs at once on an
    empty cache make it once; SIGINT while it is made leaves nothing."""
    name = os.path.basename(first["path"])
    other = os.path.join(cache, name[:17] + "0" * 16 + ".state")
    os.rename(first["path"], other)
    made, err = cache_run(args, schema, env, "cache-layout")
    ht.check("making" in err and "0" * 16 in err and os.path.exists(other) and made["path"] == first["path"],
             "a state of another layout was not named, or was used: %s" % err)
    data = read_bytes(first["path"])
    with open(first["path"], "wb") as f:
        f.write(data[:len(data) // 2])
    remade, err = cache_run(args, schema, env, "cache-damaged")
    ht.check("cannot be used" in err and "making" in err and remade["state_digest"] == first["state_digest"],
             "a truncated cached state was not made again: %s" % err)

    cache2, env2 = fresh_cache(args, "state-cache-two")
    smoke = os.path.join(args.source_dir, "configs", "smoke.toml")
    two = [subprocess.Popen([args.apiary, "run", "--config", smoke, "--state-blocks", "60", "--blocks", "2",
                             "--progress", "off", "--report", path_in(args, "cache-two-%d.json" % i)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=args.work_dir,
                            env=dict(os.environ, **env2)) for i in range(2)]
    errs = [proc.communicate(timeout=300)[1] for proc in two]
    ht.check(all(proc.returncode == 0 for proc in two), "two runs on an empty cache: %s" % errs)
    ht.check(sum("no state of" in e for e in errs) == 1 and len(cached_files(cache2)) == 1,
             "two runs at once made the state %d times: %s" % (sum("no state of" in e for e in errs), errs))

    cache3, env3 = fresh_cache(args, "state-cache-interrupted")
    proc = subprocess.Popen([args.apiary, "run", "--config", smoke, "--state-blocks", "100000", "--progress", "off"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=args.work_dir,
                            env=dict(os.environ, **env3))
    time.sleep(3.0)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    left = [n for n in os.listdir(cache3) if not n.endswith(".lock")] if os.path.isdir(cache3) else []
    ht.check(proc.returncode == 130 and "nothing kept" in stderr and not left,
             "SIGINT while the state was made: exit %d, left %s; stderr:\n%s" % (proc.returncode, left, stderr))
    print("cache: another layout's state named and kept; a truncated one made again; two runs at once made it once; "
          "SIGINT left nothing")


def cache_refusals(args, env):
    report = path_in(args, "cache-refused.json")
    smoke = ["--config", os.path.join(args.source_dir, "configs", "smoke.toml"), "--report", report]
    blocker = path_in(args, "not-a-directory")
    with open(blocker, "w") as f:
        f.write("x")
    seen = [
        one_line_refusal(args, ["run", *smoke, "--state-blocks", "20", "--state", "x.state"],
                         ["--state", "--state-blocks", "give one"], report),
        one_line_refusal(args, ["run", *smoke, "--state-blocks", "20", "--state-memory", "heap"],
                         ["--state-blocks 20", "heap"], report),
        one_line_refusal(args, ["snapshot", *SMALL, "--to-cache"], ["--to-cache", "--blocks"]),
    ]
    # The cache directory in the environment for the one that needs it.
    p = ht.run_apiary(args, ["run", *smoke, "--state-blocks", "20"], env={"APIARY_STATE_CACHE": blocker})
    ht.check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "cannot be made" in p.stderr,
             "a state cache path that is a file: exit %d: %s" % (p.returncode, p.stderr))
    seen.append(p.stderr.strip())
    p = ht.run_apiary(args, ["run", *smoke, "--state-blocks", "20"], env={"APIARY_STATE_CACHE": "off"})
    ht.check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "is off" in p.stderr,
             "APIARY_STATE_CACHE=off: exit %d: %s" % (p.returncode, p.stderr))
    seen.append(p.stderr.strip())
    print("cache refusals:\n  " + "\n  ".join(seen))


def mode_verify(args, schema):
    """apiary snapshot --verify: a state file and a snapshot check out (exit 0, their head and digest printed); a
    damaged, truncated or empty file, a directory and a FIFO are one line and exit 1; another option is exit 2."""
    state = path_in(args, "v.state")
    make_snapshot(args, state, "--blocks", "5", "--state-memory", "mapped")
    snap = path_in(args, "v.snap")
    made = make_snapshot(args, snap, "--blocks", "5")
    for f in (state, snap):
        p = ht.run_apiary(args, ["snapshot", "--verify", f])
        ht.check(p.returncode == 0 and "checks out" in p.stdout and "head block 5," in p.stdout
                 and "genesis_accounts=1000" in p.stdout, "--verify %s: exit %d: %s%s" % (f, p.returncode, p.stdout,
                                                                                          p.stderr))
    ht.check(made.split("state digest ")[1][:64] in p.stdout, "--verify printed another digest: %s" % p.stdout)
    data = read_bytes(state)
    fifo = path_in(args, "v.fifo")
    os.mkfifo(fifo)
    empty = damaged(args, "v-empty.state", b"")
    bad = {"a flipped byte": (damaged(args, "v-flipped.state", data, flip=len(data) - 64), "does not match"),
           "a truncated file": (damaged(args, "v-cut.state", data, cut=len(data) - 4096), "truncated"),
           "an empty file": (empty, "truncated"),
           "a directory": (args.work_dir, "directory"),
           "a FIFO": (fifo, "FIFO")}
    seen = []
    for what, (f, needle) in bad.items():
        p = ht.run_apiary(args, ["snapshot", "--verify", f], timeout=30)
        lines = p.stderr.strip().splitlines()
        ht.check(p.returncode == 1 and len(lines) == 1 and needle in lines[0] and p.stdout == "",
                 "--verify %s: exit %d: %s" % (what, p.returncode, p.stderr))
        seen.append(lines[0])
    seen.append(one_line_refusal(args, ["snapshot", "--verify", state, "--accounts", "5"], ["--verify", "--accounts"]))
    print("verify:\n  " + "\n  ".join(seen))


def main():
    return ht.run_modes({"use": mode_use, "refusals": mode_refusals, "interrupt": mode_interrupt,
                         "mapped": mode_mapped, "cache": mode_cache, "verify": mode_verify}, __doc__)


if __name__ == "__main__":
    sys.exit(main())
