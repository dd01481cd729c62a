#!/usr/bin/env python3
"""End-to-end tests of `apiary run --block-log FILE` (docs/block-log.md), run by ctest.

  run       a smoke run writes FILE and FILE.artifacts; read here independently of apiary's reader (the position
            words walked back from the end, the artifacts' v1.1 header and entries): one entry per block the run
            applied, numbered 1 on, each block's previous id the id the artifacts give the block before it, and the
            measured blocks byte for byte the packed blocks --dump-blocks writes, with the same ids.
  refusals  --block-log onto a device, onto the report, and with --state: exit status 2, one line, no file; a run
            that fails keeps the blocks applied before its failure, log and artifacts whole and agreeing.
"""

import json
import os
import struct
import sys

import harness_test as ht

SMOKE = ["--blocks", "6", "--warmup-blocks", "2"]
OFFSET_MASK = (1 << 48) - 1


def smoke_config(args):
    return ["--config", os.path.join(args.source_dir, "configs", "smoke.toml")]


def walk(log):
    """The entries of a block_log: (offset, size) each, from the position words."""
    entries, end = [], len(log)
    while end > 0:
        (word,) = struct.unpack_from("<Q", log, end - 8)
        ht.check(word >> 48 == 0, "word at byte %d: %#x: apiary stores blocks plainly" % (end - 8, word))
        start = word & OFFSET_MASK
        ht.check(start < end - 8, "word at byte %d points to %d" % (end - 8, start))
        entries.append((start, end - 8 - start))
        end = start
    return entries[::-1]


def artifacts(data):
    head, = struct.unpack_from("<I", data, 0)
    major, minor = data[45], data[46]
    tail, interrupted = struct.unpack_from("<II", data, 48)
    ht.check((major, minor) == (1, 1) and interrupted == 0, "artifacts header %d.%d, interrupted %d"
             % (major, minor, interrupted))
    body = data[56:]
    ht.check(len(body) % 24 == 0, "artifacts: %d bytes after the header" % len(body))
    entries = [(struct.unpack_from("<Q", body, i)[0], body[i + 8:i + 24]) for i in range(0, len(body), 24)]
    return head, tail, entries


def mode_run(args, schema):
    out = os.path.join(args.work_dir, "blocks", "block_log")
    dump = os.path.join(args.work_dir, "block-log-dump.jsonl")
    report = os.path.join(args.work_dir, "block-log-run.json")
    for stale in (out, out + ".artifacts"):
        if os.path.exists(stale):
            os.remove(stale)
    p = ht.run_apiary(args, ["run", *smoke_config(args), *SMOKE, "--block-log", out, "--dump-blocks", dump,
                             "--dump-block-limit", "100", "--report", report])
    ht.check(p.returncode == 0, "run: exit status %d; stderr:\n%s" % (p.returncode, p.stderr))
    r = ht.load_report(report, schema)
    ht.check(r["config"]["block-log"] == out, "the report's config names %s" % r["config"]["block-log"])
    with open(out, "rb") as f:
        log = f.read()
    with open(out + ".artifacts", "rb") as f:
        head, tail, index = artifacts(f.read())
    entries = walk(log)
    n = len(entries)
    ht.check(n == r["aggregates"]["measured_blocks"] + r["config"]["warmup-blocks"] and n >= 8,
             "%d blocks in the log, the run applied %d + %d" % (n, r["config"]["warmup-blocks"],
                                                              r["aggregates"]["measured_blocks"]))
    ht.check(head == n and tail == 1 and len(index) == n, "artifacts: head %d, tail %d, %d entries for %d blocks"
             % (head, tail, len(index), n))
    ids = {}
    for num, ((start, size), (word, stripped)) in enumerate(zip(entries, index, strict=True), start=1):
        ht.check(word == start, "block %d: the artifacts' word %#x, the log's entry starts at %d" % (num, word, start))
        block = log[start:start + size]
        previous = block[:20]
        ht.check(struct.unpack(">I", previous[:4])[0] + 1 == num, "entry %d holds block %d"
                 % (num, struct.unpack(">I", previous[:4])[0] + 1))
        ids[num] = struct.pack(">I", num) + stripped
        if num > 1:
            ht.check(previous == ids[num - 1], "block %d's previous is not block %d's id" % (num, num - 1))
    with open(dump) as f:
        dumped = [json.loads(line) for line in f]
    ht.check(len(dumped) == r["aggregates"]["measured_blocks"], "%d blocks dumped" % len(dumped))
    for d in dumped:
        num = d["block_num"]
        start, size = entries[num - 1]
        ht.check(log[start:start + size].hex() == d["packed_hex"], "block %d differs from the dump's" % num)
        ht.check(ids[num].hex() == d["id"], "block %d: the artifacts' id %s, the dump's %s"
                 % (num, ids[num].hex(), d["id"]))
    ht.check("%d blocks in the block log" % n in p.stdout, "the summary does not count the block log:\n" + p.stdout)
    print("run: %d blocks, %d bytes; the %d measured equal the dump's" % (n, len(log), len(dumped)))


def refused(args, cmd, words, files):
    p = ht.run_apiary(args, cmd, timeout=300)
    lines = p.stderr.strip().splitlines()
    ht.check(p.returncode == 2 and len(lines) == 1 and all(w in lines[0] for w in words),
             "%s: exit status %d, expected 2 and one line with %s; stderr:\n%s"
             % (" ".join(cmd), p.returncode, words, p.stderr))
    for f in files:
        ht.check(not os.path.exists(f), "%s: %s was left behind" % (" ".join(cmd), f))
    return lines[0]


def mode_refusals(args, _schema):
    out = os.path.join(args.work_dir, "refused_block_log")
    report = os.path.join(args.work_dir, "refused.json")
    for stale in (out, out + ".artifacts", report):
        if os.path.exists(stale):
            os.remove(stale)
    seen = [
        refused(args, ["run", *smoke_config(args), *SMOKE, "--block-log", "/dev/null"], ["--block-log", "regular file"],
                []),
        refused(args, ["run", *smoke_config(args), *SMOKE, "--report", report, "--block-log", report],
                ["--block-log", "--report"], [report]),
        refused(args, ["run", *smoke_config(args), "--state", os.path.join(args.work_dir, "any.state"), "--block-log",
                       out, "--print-config"], ["--block-log", "--state"], [out]),
    ]
    # A run that fails keeps, whole, the blocks it applied before: a log and artifacts that agree, no temporary.
    p = ht.run_apiary(args, ["run", *smoke_config(args), *SMOKE, "--fail-at-block", "4", "--block-log", out,
                             "--report", report])
    ht.check(p.returncode == 1, "a failing run: exit status %d; stderr:\n%s" % (p.returncode, p.stderr))
    with open(out, "rb") as f:
        entries = walk(f.read())
    with open(out + ".artifacts", "rb") as f:
        head, _, index = artifacts(f.read())
    ht.check(0 < len(entries) == head == len(index) <= 4, "the failed run's log: %d entries, artifacts head %d"
             % (len(entries), head))
    leftovers = [f for f in os.listdir(args.work_dir) if f.startswith("refused_block_log") and ".tmp-" in f]
    ht.check(not leftovers, "temporary files left: %s" % leftovers)
    print("refusals:\n  " + "\n  ".join(seen))


def main():
    return ht.run_modes({"run": mode_run, "refusals": mode_refusals}, __doc__)


if __name__ == "__main__":
    sys.exit(main())
