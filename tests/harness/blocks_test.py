#!/usr/bin/env python3
"""End-to-end tests of `apiary blocks verify` (docs/protocol.md, "Real blocks"), run by ctest, on the real main-net
blocks of tests/data/hive.

  verify     both fixtures verify (exit 0), each file's blocks, transactions and operations per kind as the JSON
             itself counts them; the same blocks rewritten in the legacy JSON form (["vote", {...}], "1.000 STEEM")
             and one block as a get_block result inside a JSON-RPC response verify alike.
  damage     a truncated file, a number changed in an operation, a changed block id, a changed signing key, a virtual
             operation, a file that is no JSON and a JSON file of no blocks: each one line on stderr naming the file
             and the block and transaction or the position, exit status 1, the other files still verified; a missing
             file is exit status 2.
"""

import collections
import json
import os
import sys

import harness_test as ht

FIXTURES = ("one.pat.json", "milion.pat.json")
LEGACY_SYMBOLS = {"@@000000021": "STEEM", "@@000000013": "SBD", "@@000000037": "VESTS"}


def fixture(args, name):
    return os.path.join(args.source_dir, "tests", "data", "hive", name)


def load(args, name):
    with open(fixture(args, name)) as f:
        return json.load(f)


def write(args, name, text):
    p = os.path.join(args.work_dir, name)
    with open(p, "w") as f:
        f.write(text)
    return p


def verify(args, *files):
    return ht.run_apiary(args, ["blocks", "verify", *files], timeout=300)


def counted(blocks):
    """Transactions and operations per kind, straight from the JSON."""
    kinds = collections.Counter()
    transactions = 0
    for b in blocks:
        for tx in b["transactions"]:
            transactions += 1
            for op in tx["operations"]:
                name = op["type"] if isinstance(op, dict) else op[0]
                kinds[name[:-len("_operation")] if name.endswith("_operation") else name] += 1
    return transactions, kinds


def check_file_line(out, path, blocks):
    transactions, kinds = counted(blocks)
    line = next((text for text in out.splitlines() if text.startswith(path + ": ")), None)
    ht.check(line is not None, "no line for %s in:\n%s" % (path, out))
    nums = [int(b["previous"][:8], 16) + 1 for b in blocks]
    ht.check(line.startswith("%s: %s block%s (%s-%s), %s transactions" % (
        path, format(len(blocks), ","), "" if len(blocks) == 1 else "s", format(min(nums), ","), format(max(nums), ","),
        format(transactions, ","))),
        "counts of %s: %s" % (path, line))
    for name, n in kinds.items():
        ht.check(" %s %d" % (name, n) in line, "%s: %s %d missing from %s" % (path, name, n, line))
    total = sum(kinds.values())
    ht.check(("%s operation" % format(total, ",")) in line if total else "no operations" in line,
             "%s: %d operations: %s" % (path, total, line))


def legacy(value):
    """HF26 JSON made legacy: operations as [name, value], assets as text with Steem-era symbols."""
    if isinstance(value, list):
        return [legacy(v) for v in value]
    if not isinstance(value, dict):
        return value
    if set(value) == {"amount", "precision", "nai"}:
        amount, p = int(value["amount"]), value["precision"]
        sign, mag = ("-" if amount < 0 else ""), abs(amount)
        return "%s%d.%0*d %s" % (sign, mag // 10 ** p, p, mag % 10 ** p, LEGACY_SYMBOLS[value["nai"]])
    if set(value) == {"type", "value"} and value["type"].endswith("_operation"):
        return [value["type"][:-len("_operation")], legacy(value["value"])]
    return {k: legacy(v) for k, v in value.items()}


def mode_verify(args, schema):
    paths = [fixture(args, f) for f in FIXTURES]
    p = verify(args, *paths)
    ht.check(p.returncode == 0 and not p.stderr, "verify: exit status %d: %s" % (p.returncode, p.stderr))
    for path, name in zip(paths, FIXTURES, strict=True):
        check_file_line(p.stdout, path, load(args, name)["blocks"])
    ht.check("Summary: 2 of 2 files verified; 2,000 blocks" in p.stdout, "summary: %s" % p.stdout)

    million = load(args, "milion.pat.json")
    old = write(args, "blocks-legacy.json", json.dumps(legacy(million)))
    busy = next(b for b in million["blocks"] if len(b["transactions"]) > 1)
    one = write(args, "blocks-one.json", json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"block": legacy(busy)}}))
    p = verify(args, old, one)
    ht.check(p.returncode == 0 and not p.stderr, "verify legacy: exit status %d: %s" % (p.returncode, p.stderr))
    check_file_line(p.stdout, old, million["blocks"])
    check_file_line(p.stdout, one, [busy])
    print(p.stdout)


def refused(args, path, words, others=()):
    p = verify(args, *others, path)
    lines = p.stderr.splitlines()
    ht.check(p.returncode == 1, "%s: exit status %d, not 1: %s" % (path, p.returncode, p.stderr))
    ht.check(len(lines) == 1 and lines[0].startswith("apiary blocks: " + path + ": "),
             "%s: not one error line naming the file: %r" % (path, p.stderr))
    for w in words:
        ht.check(w in lines[0], "%s: %r not in %r" % (path, w, lines[0]))
    for o in others:
        ht.check(o + ": " in p.stdout, "%s: the other file %s was not verified: %s" % (path, o, p.stdout))
    ht.check("Summary: %d of %d file%s verified" % (len(others), len(others) + 1, "s" if others else "") in p.stdout,
             "%s: summary %s" % (path, p.stdout))
    return lines[0]


def damaged_block(args, change):
    """The million fixture with one change to the first block holding two transactions: its number and the file."""
    doc = load(args, "milion.pat.json")
    b = next(b for b in doc["blocks"] if len(b["transactions"]) > 1)
    change(b)
    return int(b["previous"][:8], 16) + 1, json.dumps(doc, indent=1)


def mode_damage(args, schema):
    good = fixture(args, "one.pat.json")
    seen = []
    with open(fixture(args, "milion.pat.json")) as f:
        text = f.read()
    cut = write(args, "blocks-truncated.json", text[:len(text) // 2])
    seen.append(refused(args, cut, ["not valid JSON at line", "byte"], [good]))

    def bump(value):
        """Adds one to the first number in an operation's fields (not a precision): a changed operation."""
        for k, v in (value.items() if isinstance(value, dict) else enumerate(value)):
            if k == "precision":
                continue
            if isinstance(v, bool):
                continue
            if isinstance(v, int) or (isinstance(v, str) and v.isdigit()):
                value[k] = type(v)(int(v) + 1)
                return True
            if isinstance(v, (dict, list)) and bump(v):
                return True
        return False

    def change_operation(b):
        ht.check(bump(b["transactions"][1]["operations"][0]["value"]), "no number in %s" % b["transactions"][1])
    num, damaged = damaged_block(args, change_operation)
    seen.append(refused(args, write(args, "blocks-changed-tx.json", damaged),
                        ["block %d, transaction 1 (id " % num, "differs from the stated"], [good]))

    def rename(b):
        b["block_id"] = b["block_id"][:-1] + ("0" if b["block_id"][-1] != "0" else "1")
    num, damaged = damaged_block(args, rename)
    seen.append(refused(args, write(args, "blocks-changed-id.json", damaged), ["block %d: block id computed" % num]))

    def rekey(b):
        b["signing_key"] = "STM7D7oC3o7YYLoVVd47qXr3tMaABtGGsvWiraQQt2jtnX8gZAjdB"
    num, damaged = damaged_block(args, rekey)
    seen.append(refused(args, write(args, "blocks-changed-key.json", damaged),
                        ["block %d: the witness signature" % num]))

    def virtual(b):
        b["transactions"][0]["operations"][0] = {"type": "producer_reward_operation", "value": {}}
    num, damaged = damaged_block(args, virtual)
    seen.append(refused(args, write(args, "blocks-virtual.json", damaged),
                        ["(block %d)" % num, "transactions[0].operations[0]", "virtual operation"]))

    seen.append(refused(args, write(args, "blocks-binary.bin", "\x00\x01binary"), ["not block_api JSON"]))
    seen.append(refused(args, write(args, "blocks-none.json", '{"id": 1, "result": {}}'), ["no blocks"]))

    missing = os.path.join(args.work_dir, "blocks-missing.json")
    p = verify(args, missing)
    ht.check(p.returncode == 2 and missing in p.stderr and len(p.stderr.splitlines()) == 1,
             "missing file: exit status %d: %s" % (p.returncode, p.stderr))
    seen.append(p.stderr.strip())
    print("refusals:\n  " + "\n  ".join(seen))


def main():
    return ht.run_modes({"verify": mode_verify, "damage": mode_damage}, __doc__)


if __name__ == "__main__":
    sys.exit(main())
