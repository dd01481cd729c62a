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
  log        Hive's block_logs verify (exit 0): hf28 (zstd frames), mirrornet_1k (plain), testnet_pattern (frames
             with dictionary 0, from --dictionaries), a copy told a block_log by its last position word alone; each
             file's block count and range as its position words, walked back from the end here, give them; the
             witness keys said not compared; --chain-id testnet and mirrornet print Hive's ids, computed here.
  log_damage a truncated log, a flipped bit in a position word and in a block's merkle root, a plain entry marked
             compressed and a compressed one marked plain, a dictionary not given and one missing: each one line
             naming the file and the byte, exit status 1; a bad --chain-id is exit status 2.
  log_run    the block_log `apiary run --block-log` wrote verifies whole: as many blocks as its position words.
"""

import collections
import hashlib
import json
import os
import shutil
import struct
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

    seen.append(refused(args, write(args, "blocks-binary.bin", "\x00\x01binary"), ["neither block_api JSON"]))
    seen.append(refused(args, write(args, "blocks-none.json", '{"id": 1, "result": {}}'), ["no blocks"]))

    missing = os.path.join(args.work_dir, "blocks-missing.json")
    p = verify(args, missing)
    ht.check(p.returncode == 2 and missing in p.stderr and len(p.stderr.splitlines()) == 1,
             "missing file: exit status %d: %s" % (p.returncode, p.stderr))
    seen.append(p.stderr.strip())
    print("refusals:\n  " + "\n  ".join(seen))


# Hive's block_logs in tests/data/hive, and the dictionaries' directory each needs.
LOGS = {"hf28": None, "mirrornet_1k": None, "testnet_pattern": "dictionaries"}
WORD_FLAGS = {"compressed": 1 << 63, "dictionary": 1 << 56}
OFFSET_MASK = (1 << 48) - 1


def log_fixture(args, name):
    return fixture(args, os.path.join(name, "block_log"))


def walk(log):
    """The entries of a block_log from its position words, back from the end: (offset, size, word) each."""
    entries, end = [], len(log)
    while end > 0:
        (word,) = struct.unpack_from("<Q", log, end - 8)
        start = word & OFFSET_MASK
        ht.check(start < end - 8, "word at byte %d points to %d" % (end - 8, start))
        entries.append((start, end - 8 - start, word))
        end = start
    return entries[::-1]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def log_options(args, name):
    d = LOGS[name]
    return ["--dictionaries", fixture(args, d)] if d else []


def check_log_line(out, path, blocks):
    line = next((text for text in out.splitlines() if text.startswith(path + ": ")), None)
    ht.check(line is not None, "no line for %s in:\n%s" % (path, out))
    ht.check(line.startswith("%s: %s blocks (1-%s), " % (path, format(blocks, ","), format(blocks, ","))),
             "%s: %d blocks by its position words: %s" % (path, blocks, line))
    after = out.splitlines()[out.splitlines().index(line) + 1]
    ht.check("witness keys not compared for %s blocks" % format(blocks, ",") in after,
             "%s: the witness keys are not said uncompared: %s" % (path, after))


def mode_log(args, schema):
    paths, total = [], 0
    for name in LOGS:
        path = log_fixture(args, name)
        p = verify(args, *log_options(args, name), path)
        ht.check(p.returncode == 0 and not p.stderr, "%s: exit status %d: %s" % (name, p.returncode, p.stderr))
        blocks = len(walk(read(path)))
        check_log_line(p.stdout, path, blocks)
        print(p.stdout)
        paths.append(path)
        total += blocks
    # All at once, with a JSON file; and a copy named neither block_log nor .json, told by its last position word.
    copy = os.path.join(args.work_dir, "mirrornet.bin")
    shutil.copyfile(log_fixture(args, "mirrornet_1k"), copy)
    json_file = fixture(args, "one.pat.json")
    p = verify(args, "--dictionaries", fixture(args, "dictionaries"), *paths, copy, json_file)
    ht.check(p.returncode == 0 and not p.stderr, "all: exit status %d: %s" % (p.returncode, p.stderr))
    check_log_line(p.stdout, copy, len(walk(read(copy))))
    check_file_line(p.stdout, json_file, load(args, "one.pat.json")["blocks"])
    summary = "Summary: 5 of 5 files verified; %s blocks" % format(
        total + len(walk(read(copy))) + len(load(args, "one.pat.json")["blocks"]), ",")
    ht.check(summary in p.stdout, "expected %r in:\n%s" % (summary, p.stdout))
    ht.check("signatures' chain id: main net's by block time" in p.stdout, "no chain id line:\n" + p.stdout)
    for name, chain in (("testnet", hashlib.sha256(b"testnet").hexdigest()), ("mirrornet", "42" + "00" * 31),
                        (hashlib.sha256(b"other").hexdigest(), hashlib.sha256(b"other").hexdigest())):
        p = verify(args, "--chain-id", name, log_fixture(args, "hf28"))
        ht.check(p.returncode == 0 and "signatures' chain id: " + (chain if name == chain else name + " " + chain)
                 in p.stdout, "--chain-id %s: exit status %d: %s%s" % (name, p.returncode, p.stdout, p.stderr))
    print("chain ids: testnet %s" % hashlib.sha256(b"testnet").hexdigest())


def damaged_log(args, name, source, change):
    """A copy of a fixture's block_log, in its own directory, changed by change(bytearray, entries)."""
    d = os.path.join(args.work_dir, "damaged-" + name)
    os.makedirs(d, exist_ok=True)
    data = bytearray(read(log_fixture(args, source)))
    change(data, walk(bytes(data)))
    path = os.path.join(d, "block_log")
    with open(path, "wb") as f:
        f.write(data)
    return path


def set_word(data, entries, index, word):
    start, size, _ = entries[index]
    struct.pack_into("<Q", data, start + size, word)


def mode_log_damage(args, schema):
    good = log_fixture(args, "hf28")
    seen = []
    entries = walk(read(log_fixture(args, "mirrornet_1k")))
    middle = len(entries) // 2  # index of the block numbered middle + 1
    start, size, word = entries[middle]

    def cut(data, _):
        del data[start + size // 2:]
    path = damaged_log(args, "truncated", "mirrornet_1k", cut)
    seen.append(refused(args, path, ["at byte %d" % (start + size // 2 - 8), "position word"], [good]))

    def flip_word(data, e):
        set_word(data, e, middle, word ^ (1 << 40))
    path = damaged_log(args, "word", "mirrornet_1k", flip_word)
    seen.append(refused(args, path, ["at byte %d" % (start + size), "position word"]))

    def flip_root(data, _):
        witness = data[start + 24]  # the witness's name, after previous (20) and timestamp (4): its length byte
        data[start + 25 + witness] ^= 0x01  # the first byte of the transaction merkle root
    path = damaged_log(args, "body", "mirrornet_1k", flip_root)
    seen.append(refused(args, path, ["at byte %d" % start, "block %d" % (middle + 1), "merkle root"]))

    def mark_compressed(data, e):
        set_word(data, e, middle, word | WORD_FLAGS["compressed"])
    path = damaged_log(args, "marked-compressed", "mirrornet_1k", mark_compressed)
    seen.append(refused(args, path, ["block %d at byte %d" % (middle + 1, start), "zstd"]))

    hf28 = walk(read(log_fixture(args, "hf28")))
    h_start, _, h_word = hf28[len(hf28) // 2]

    def mark_plain(data, e):
        set_word(data, e, len(hf28) // 2, h_word & ~WORD_FLAGS["compressed"])
    path = damaged_log(args, "marked-plain", "hf28", mark_plain)
    seen.append(refused(args, path, ["at byte %d" % h_start]))

    testnet = log_fixture(args, "testnet_pattern")
    seen.append(refused(args, testnet, ["block 1 at byte 0", "000M.dict.zst"]))
    empty = os.path.join(args.work_dir, "no-dictionaries")
    os.makedirs(empty, exist_ok=True)
    p = verify(args, "--dictionaries", empty, testnet)
    lines = p.stderr.splitlines()
    ht.check(p.returncode == 1 and len(lines) == 1 and os.path.join(empty, "000M.dict.zst") in lines[0],
             "a missing dictionary: exit status %d: %s" % (p.returncode, p.stderr))
    seen.append(lines[0])

    p = verify(args, "--chain-id", "beeab0de", good)
    ht.check(p.returncode == 2 and len(p.stderr.splitlines()) == 1 and "--chain-id" in p.stderr,
             "a short --chain-id: exit status %d: %s" % (p.returncode, p.stderr))
    seen.append(p.stderr.strip())
    print("refusals:\n  " + "\n  ".join(seen))


def mode_log_run(args, schema):
    out = os.path.join(args.work_dir, "run", "block_log")
    for stale in (out, out + ".artifacts"):
        if os.path.exists(stale):
            os.remove(stale)
    p = ht.run_apiary(args, ["run", "--config", os.path.join(args.source_dir, "configs", "smoke.toml"), "--blocks",
                             "6", "--warmup-blocks", "2", "--block-log", out,
                             "--report", os.path.join(args.work_dir, "blocks-log-run.json")])
    ht.check(p.returncode == 0, "run: exit status %d; stderr:\n%s" % (p.returncode, p.stderr))
    blocks = len(walk(read(out)))
    ht.check(blocks >= 8, "the run wrote %d blocks" % blocks)
    p = verify(args, out)
    ht.check(p.returncode == 0 and not p.stderr, "verify: exit status %d: %s" % (p.returncode, p.stderr))
    check_log_line(p.stdout, out, blocks)
    print(p.stdout)


def main():
    return ht.run_modes({"verify": mode_verify, "damage": mode_damage, "log": mode_log, "log_damage": mode_log_damage,
                         "log_run": mode_log_run}, __doc__)


if __name__ == "__main__":
    sys.exit(main())
