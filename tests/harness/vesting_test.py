#!/usr/bin/env python3
"""End-to-end tests of --genesis-vesting as a distribution and --payer-weights (docs/rc.md, "Who pays: vesting and
activity"), run by ctest.

  bad-values  every bad value of either option, on the command line and in a config file: exit status 2 and one line
              naming the value; a total vesting beyond 64 bits and --payer-weights vesting:E in apiary workload
              likewise; good values print back through --print-config and read back.
  run         a smoke run with log-normal vesting and payers weighted by vesting: exit status 0, the report matches
              the schema, names both options, its audit holds, and its total vesting is the sum of each account's
              draw computed here independently (SplitMix64 of the index, scipy's inverse CDF); a replay with a
              Pareto vesting accepts and rejects the same transactions twice.
"""

import json
import math
import os
import sys

import harness_test as ht
from scipy import stats

SMOKE = ["--blocks", "5", "--warmup-blocks", "1"]
LOGNORMAL = "lognormal:median=1e11,sigma=2,min=1e6,max=1e15"

BAD_VESTING = [
    ("-5", "'-5'"),
    ("900000000001", "900000000000"),
    ("gamma:k=1,min=1,max=2", "unknown distribution 'gamma'"),
    ("lognormal:median=1e11,sigma=0,min=1,max=2", "sigma=0"),
    ("lognormal:median=1e11,sigma=1,min=5e6,max=1e6", "min=5000000 is above max=1000000"),
    ("lognormal:median=1e11,sigma=1,min=-1,max=5", "min=-1"),
    ("lognormal:median=1e12,sigma=1,min=1,max=1000", "median=1e+12 is outside [min=1, max=1000]"),
    ("pareto:alpha=0,min=1,max=2", "alpha=0"),
    ("pareto:alpha=1.2,min=1e9", "max is missing"),
    ("lognormal:median=1e18,sigma=1,min=1e17,max=9e18", "does not fit in 64 bits"),
]
BAD_WEIGHTS = [("vesting:-1", "'vesting:-1'"), ("vesting:5", "'vesting:5'"), ("stake", "'stake'"),
               ("vesting:", "'vesting:'")]


def smoke_config(args):
    return ["--config", os.path.join(args.source_dir, "configs", "smoke.toml")]


def one_line_refusal(args, cmd, words):
    p = ht.run_apiary(args, cmd, timeout=120)
    lines = p.stderr.strip().splitlines()
    ht.check(p.returncode == 2, "%s: exit status %d, expected 2; stderr:\n%s" % (" ".join(cmd), p.returncode, p.stderr))
    ht.check(len(lines) == 1 and all(w in lines[0] for w in words),
             "%s: expected one line with %s; stderr:\n%s" % (" ".join(cmd), words, p.stderr))
    return lines[0]


def mode_bad_values(args, _schema):
    seen = []
    config = os.path.join(args.work_dir, "bad-vesting.toml")
    for option, cases in (("--genesis-vesting", BAD_VESTING), ("--payer-weights", BAD_WEIGHTS)):
        for value, needle in cases:
            seen.append(one_line_refusal(args, ["run", *smoke_config(args), option, value, "--print-config"],
                                         [option, needle]))
            with open(config, "w") as f:
                f.write('accounts = 1000\n%s = "%s"\n' % (option[2:], value))
            one_line_refusal(args, ["run", "--config", config, "--print-config"], [needle])
    seen.append(one_line_refusal(args, ["workload", "--out", os.path.join(args.work_dir, "never.bin"),
                                        "--transactions", "10", "--payer-weights", "vesting:1"],
                                 ["--payer-weights vesting:1", "apiary replay"]))
    ht.check(not os.path.exists(os.path.join(args.work_dir, "never.bin")), "a refused workload was written")

    # Good values print back in their canonical form and read back to the same.
    p = ht.run_apiary(args, ["run", *smoke_config(args), "--genesis-vesting", LOGNORMAL, "--payer-weights",
                             "vesting:0.5", "--print-config"])
    ht.check(p.returncode == 0, "--print-config: %s" % p.stderr)
    printed = os.path.join(args.work_dir, "printed.toml")
    with open(printed, "w") as f:
        f.write(p.stdout)
    for line in ('genesis-vesting = "lognormal:median=1e+11,sigma=2,min=1000000,max=1000000000000000"',
                 'payer-weights = "vesting:0.5"'):
        ht.check(line in p.stdout.splitlines(), "--print-config lacks %s:\n%s" % (line, p.stdout))
    again = ht.run_apiary(args, ["run", "--config", printed, "--print-config"])
    ht.check(again.returncode == 0 and again.stdout.replace(printed, "") == p.stdout.replace(printed, ""),
             "the printed config does not read back the same: %s" % again.stderr)
    print("bad values:\n  " + "\n  ".join(seen))


def splitmix_unit(i):
    mask = (1 << 64) - 1
    z = ((i + 1) * 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    z ^= z >> 31
    return ((z >> 11) + 0.5) * 2.0 ** -53


def lognormal_total(accounts, median, sigma, lo, hi):
    d = stats.lognorm(s=sigma, scale=median)
    a, b = d.cdf(lo), d.cdf(hi)
    return sum(min(max(round(float(d.ppf(a + splitmix_unit(i) * (b - a)))), lo), hi) for i in range(accounts))


def mode_run(args, schema):
    report = os.path.join(args.work_dir, "vesting-run.json")
    p = ht.run_apiary(args, ["run", *smoke_config(args), *SMOKE, "--genesis-vesting", LOGNORMAL, "--payer-weights",
                             "vesting:1", "--audit", "on", "--report", report])
    ht.check(p.returncode == 0, "run: exit status %d; stderr:\n%s" % (p.returncode, p.stderr))
    r = ht.load_report(report, schema)
    cfg = r["config"]
    ht.check(cfg["genesis-vesting"] == "lognormal:median=1e+11,sigma=2,min=1000000,max=1000000000000000"
             and cfg["payer-weights"] == "vesting:1", "the report's config: %s %s"
             % (cfg["genesis-vesting"], cfg["payer-weights"]))
    ht.check(r["audit"]["passed"], "the audit failed: %s" % r["audit"])
    total = r["rc"]["total_vesting"]
    expected = lognormal_total(cfg["accounts"], 1e11, 2.0, 10**6, 10**15)
    ht.check(math.isclose(total, expected, rel_tol=1e-9),
             "total vesting %d, the accounts' draws sum to %d" % (total, expected))
    ht.check(total != cfg["accounts"] * 10**11, "the total is the constant's")

    results = []
    for name in ("first", "second"):
        out = os.path.join(args.work_dir, "vesting-replay-%s.json" % name)
        p = ht.run_apiary(args, ["replay", "--accounts", "500", "--transactions", "3000", "--block-size", "64KiB",
                                 "--genesis-vesting", "pareto:alpha=1.1,min=1e7,max=1e13", "--payer-weights",
                                 "vesting:0.5", "--report", out], timeout=300)
        ht.check(p.returncode == 0, "replay: exit status %d; stderr:\n%s" % (p.returncode, p.stderr))
        with open(out) as f:
            results.append(json.load(f)["result"])
    for key in ("state_digest", "accepted", "rejected"):
        ht.check(results[0][key] == results[1][key], "two replays differ in %s" % key)
    print("run: total vesting %d over %d accounts (the independent sum %d); replays agree on %s"
          % (total, cfg["accounts"], expected, results[0]["state_digest"][:16]))


def main():
    return ht.run_modes({"bad-values": mode_bad_values, "run": mode_run}, __doc__)


if __name__ == "__main__":
    sys.exit(main())
