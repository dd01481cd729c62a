#!/usr/bin/env python3
"""End-to-end tests of `apiary replay --blocks-from` (docs/replay.md, "Real traffic"), run by ctest, on the real
blocks of tests/data/hive. The expected figures are counted here from the fixtures themselves.

  milion     main-net blocks 1,000,000-1,000,999 (block_api JSON): per operation kind the report's count is the
             file's; every transaction holding a modelled operation is pushed and accepted, every modelled operation
             applied; the others counted as skipped, kind by kind; the transactions without one skipped; the accounts
             and comments created at genesis are those the operations reference before the range creates them; the
             real mix is the file's; a second replay gives the same state digest.
  range      --from/--to: a sub-range of the same file, counted from its blocks alone.
  block-log  a Hive block_log (mirrornet_1k): every block read, whole and in a sub-range.
  refusals   a range outside the file or reversed, --from without --blocks-from, the options that would be inert
             (--workload, --transactions, --mix, --state), a file of no blocks and blocks apiary cannot decode:
             one line on stderr, exit status 2.
"""

import collections
import json
import os
import sys

import harness_test as ht

MODELLED = ("vote", "comment", "transfer", "custom_json", "comment_options")


def fixture(args, *name):
    return os.path.join(args.source_dir, "tests", "data", "hive", *name)


def replay(args, extra, report=None):
    cmd = ["replay", *extra]
    if report:
        cmd += ["--report", report]
    return ht.run_apiary(args, cmd, timeout=300)


def kind_of(op):
    name = op["type"] if isinstance(op, dict) else op[0]
    return name[:-len("_operation")] if name.endswith("_operation") else name


def value_of(op):
    return op["value"] if isinstance(op, dict) else op[1]


def block_num(b):
    return int(b["previous"][:8], 16) + 1


def expected_of(blocks):
    """What a replay of these blocks must report, from the JSON alone."""
    kinds = collections.Counter()
    pushed = skipped = 0
    accounts, comments, known = set(), [], set()
    parents = {}
    mix = collections.Counter()
    modelled_txs = []
    for b in blocks:
        for tx in b["transactions"]:
            ops = [(kind_of(o), value_of(o)) for o in tx["operations"]]
            for k, _ in ops:
                kinds[k] += 1
            kept = [(k, v) for k, v in ops if k in MODELLED]
            if kept:
                pushed += 1
                modelled_txs.append(kept)
            else:
                skipped += 1
    for ops in modelled_txs:
        for k, v in ops:
            if k == "comment":
                parents.setdefault((v["author"], v["permlink"]), (v["parent_author"], v["parent_permlink"]))

    def need(author, permlink):
        if (author, permlink) in known:
            return
        accounts.add(author)
        parent = parents.get((author, permlink))
        if parent and parent[0]:
            need(*parent)
        known.add((author, permlink))
        comments.append((author, permlink))

    for ops in modelled_txs:
        for k, v in ops:
            if k == "vote":
                accounts.add(v["voter"])
                need(v["author"], v["permlink"])
                mix["vote"] += 1
            elif k == "comment":
                accounts.add(v["author"])
                if v["parent_author"]:
                    need(v["parent_author"], v["parent_permlink"])
                known.add((v["author"], v["permlink"]))
                mix["reply" if v["parent_author"] else "article"] += 1
            elif k == "transfer":
                accounts.update((v["from"], v["to"]))
                mix["transfer"] += 1
            elif k == "custom_json":
                accounts.update(v["required_auths"] + v["required_posting_auths"])
                mix["custom_json"] += 1
            elif k == "comment_options":
                need(v["author"], v["permlink"])
    return {"kinds": kinds, "pushed": pushed, "skipped": skipped, "accounts": len(accounts),
            "comments": len(comments), "mix": mix}


def check_report(r, blocks, first, last, what):
    e = expected_of(blocks)
    t = r["real_traffic"]
    ht.check((t["first_block"], t["last_block"], t["blocks"]) == (first, last, len(blocks)),
             "%s: range %s-%s of %s blocks, expected %d-%d of %d" % (
                 what, t["first_block"], t["last_block"], t["blocks"], first, last, len(blocks)))
    ht.check(t["transactions"] == e["pushed"] + e["skipped"], "%s: %d transactions" % (what, t["transactions"]))
    ht.check((t["transactions_pushed"], t["transactions_skipped"]) == (e["pushed"], e["skipped"]),
             "%s: pushed %d, skipped %d; expected %d, %d" % (
                 what, t["transactions_pushed"], t["transactions_skipped"], e["pushed"], e["skipped"]))
    res = r["result"]
    ht.check(res["transactions"] == e["pushed"] and res["accepted"] == e["pushed"] and res["rejected"] == 0,
             "%s: result %d transactions, %d accepted, %d rejected; %d expected, all accepted" % (
                 what, res["transactions"], res["accepted"], res["rejected"], e["pushed"]))
    got = {o["kind"]: o for o in t["operations"]}
    ht.check(set(got) == set(e["kinds"]), "%s: kinds %s, the file has %s" % (what, sorted(got), sorted(e["kinds"])))
    for kind, n in e["kinds"].items():
        o = got.get(kind, {})
        if kind in MODELLED:
            want = {"in_blocks": n, "applied": n, "rejected": 0, "skipped": 0, "skipped_share": 0, "modeled": True}
        else:
            want = {"in_blocks": n, "applied": 0, "rejected": 0, "skipped": n, "skipped_share": 1, "modeled": False}
        ht.check(all(o.get(f) == v for f, v in want.items()), "%s: %s is %s, expected %s" % (what, kind, o, want))
    ht.check((t["accounts_created"], t["comments_created"]) == (e["accounts"], e["comments"]),
             "%s: created %d accounts and %d comments, expected %d and %d" % (
                 what, t["accounts_created"], t["comments_created"], e["accounts"], e["comments"]))
    total = sum(e["mix"].values())
    for m in t["mix"]:
        want = e["mix"][m["kind"]]
        ht.check(m["operations"] == want and ht.close(m["real_share"], want / total if total else 0, 1e-4),
                 "%s: mix %s is %s, the file has %d of %d" % (what, m["kind"], m, want, total))
    ht.check(ht.close(sum(m["typical_share"] for m in t["mix"]), 1.0, 1e-3), "%s: typical shares %s" % (what, t["mix"]))
    return e


def load_blocks(args, name):
    with open(fixture(args, name)) as f:
        return json.load(f)["blocks"]


def run_report(args, extra, name):
    report = os.path.join(args.work_dir, name)
    p = replay(args, extra, report)
    ht.check(p.returncode == 0 and not p.stderr, "%s: exit status %d: %s" % (" ".join(extra), p.returncode, p.stderr))
    with open(report) as f:
        return p.stdout, json.load(f)


def mode_milion(args, _schema):
    path = fixture(args, "milion.pat.json")
    blocks = load_blocks(args, "milion.pat.json")
    out, r = run_report(args, ["--blocks-from", path], "real-milion.json")
    e = check_report(r, blocks, 1_000_000, 1_000_999, "milion")
    # The fixture's own figures, as docs/replay.md quotes them: the test can fail on a fixture changed under it.
    ht.check([e["kinds"][k] for k in ("vote", "comment", "transfer")] == [6, 3, 1], "milion: %s" % e["kinds"])
    for kind in ("vote", "comment", "transfer"):
        n = e["kinds"][kind]
        ht.check("  %s %d: %d applied, 0 rejected" % (kind, n, n) in out, "summary: no %s line in:\n%s" % (kind, out))
    _, again = run_report(args, ["--blocks-from", path], "real-milion-again.json")
    ht.check(again["result"]["state_digest"] == r["result"]["state_digest"],
             "two replays of the same blocks: state digests %s and %s" % (
                 r["result"]["state_digest"], again["result"]["state_digest"]))
    print(out)


def mode_range(args, _schema):
    path = fixture(args, "milion.pat.json")
    blocks = [b for b in load_blocks(args, "milion.pat.json") if 1_000_500 <= block_num(b) <= 1_000_999]
    _, r = run_report(args, ["--blocks-from", path, "--from", "1000500", "--to", "1000999"], "real-range.json")
    e = check_report(r, blocks, 1_000_500, 1_000_999, "range")
    ht.check(e["pushed"] < expected_of(load_blocks(args, "milion.pat.json"))["pushed"],
             "range: the sub-range holds as many modelled transactions as the file")
    one = [b for b in load_blocks(args, "milion.pat.json") if block_num(b) == 1_000_000]
    _, r = run_report(args, ["--blocks-from", path, "--to", "1000000"], "real-one.json")
    check_report(r, one, 1_000_000, 1_000_000, "first block")


def mode_block_log(args, _schema):
    path = fixture(args, "mirrornet_1k", "block_log")
    out, r = run_report(args, ["--blocks-from", path], "real-log.json")
    t = r["real_traffic"]
    ht.check((t["file_kind"], t["first_block"], t["last_block"], t["blocks"], t["transactions"]) ==
             ("block_log", 1, 1000, 1000, 0), "block_log: %s" % t)
    _, r = run_report(args, ["--blocks-from", path, "--from", "10", "--to", "20"], "real-log-range.json")
    t = r["real_traffic"]
    ht.check((t["first_block"], t["last_block"], t["blocks"]) == (10, 20, 11), "block_log range: %s" % t)
    print(out)


def mode_refusals(args, _schema):
    milion = fixture(args, "milion.pat.json")
    text = os.path.join(args.work_dir, "real-not-blocks.txt")
    with open(text, "w") as f:
        f.write("no blocks here\n")
    cases = [
        (["--blocks-from", milion, "--from", "5", "--to", "10"], "outside --blocks-from"),
        (["--blocks-from", milion, "--from", "1000010", "--to", "1000005"], "the first block is after the last"),
        (["--blocks-from", milion, "--to", "2000000"], "which holds blocks 1,000,000-1,000,999"),
        (["--from", "3"], "only with --blocks-from"),
        (["--blocks-from", milion, "--workload", milion], "--workload: not with --blocks-from"),
        (["--blocks-from", milion, "--transactions", "5"], "--transactions: not with --blocks-from"),
        (["--blocks-from", milion, "--mix", "vote=1"], "--mix: not with --blocks-from"),
        (["--blocks-from", milion, "--state", milion], "--state: not with --blocks-from"),
        (["--blocks-from", text], "neither block_api JSON"),
        (["--blocks-from", fixture(args, "testnet_pattern", "block_log")], "no dictionary directory was given"),
    ]
    seen = []
    for extra, expected in cases:
        p = replay(args, extra)
        lines = p.stderr.splitlines()
        ht.check(p.returncode == 2 and len(lines) == 1 and expected in lines[0] and not p.stdout,
                 "%s: exit status %d, expected 2 and one line with %r: %s" % (
                     " ".join(extra), p.returncode, expected, p.stderr))
        seen.append(lines[0] if lines else "")
    print("refusals:\n  " + "\n  ".join(seen))


def main():
    return ht.run_modes({"milion": mode_milion, "range": mode_range, "block-log": mode_block_log,
                         "refusals": mode_refusals}, __doc__)


if __name__ == "__main__":
    sys.exit(main())
