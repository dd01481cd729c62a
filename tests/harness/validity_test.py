#!/usr/bin/env python3
"""End-to-end tests of a run's validity (docs/report.md, "Validity"), run by ctest (tests/harness/CMakeLists.txt).
Every report the harness tests load is also held to the section's own arithmetic (harness_test.check_validity).

  starved  one producer, signing on, at a rate far above what one thread can sign: the generator falls behind its
           schedule for most of the window, so the report says valid: false with the reason, the schedule section
           says behind, and the summary has the INVALID line; the run itself completes (exit 0).
  normal   two producers, signing off, at 1,000 transactions per second, far below what they make: valid, the
           schedule's intervals ask for 1,000 a second and the colony submits them, nothing behind; a run in infinite
           mode has no schedule and is valid.
"""

import os

import harness_test as ht
from harness_test import check

SMOKE = ("configs", "smoke.toml")


def run(args, schema, name, extra):
    report = os.path.join(args.work_dir, "validity-%s.json" % name)
    if os.path.exists(report):
        os.remove(report)
    p = ht.run_apiary(args, ["run", "--config", os.path.join(args.source_dir, *SMOKE), "--report", report,
                             "--log-file", "none"] + extra)
    check(p.returncode == 0, "exit status %d; stderr:\n%s" % (p.returncode, p.stderr))
    return ht.load_report(report, schema), p.stdout


def mode_starved(args, schema):
    # One thread signs a few thousand transactions a second (fewer under a sanitizer); the schedule asks for a million.
    r, out = run(args, schema, "starved", ["--threads", "1", "--rate", "1000000", "--duration", "3", "--blocks", "0"])
    v, s = r["validity"], r["schedule"]
    check(v["valid"] is False, "a starved generator's run is valid: %s" % v)
    check(len(v["reasons"]) == 1 and "fell behind its schedule of 1000000" in v["reasons"][0], str(v["reasons"]))
    summary = {k: s[k] for k in s if k != "intervals"} if s else s
    check(s is not None and s["behind"] and s["behind_s"] > 1.0, "schedule: %s" % summary)
    check(s["worst_fall_behind"] > 0.5, "the generator made less than half its schedule: %s" % s["worst_fall_behind"])
    last = s["intervals"][-1]
    check(last["generator_lag_ms"] > 1000 and last["held_ms"] < last["lag_ms"] / 2,
          "the lag is the generator's own, not the brake's: %s" % last)
    check("INVALID: the load generator fell behind" in out, "no INVALID line in the summary:\n" + out)


def mode_normal(args, schema):
    r, out = run(args, schema, "normal", ["--sign", "off", "--rate", "1000", "--duration", "3", "--blocks", "0"])
    v, s = r["validity"], r["schedule"]
    check(v["valid"] is True and v["reasons"] == [], "a run at a fraction of the generator's speed: %s" % v)
    check(s is not None and not s["behind"] and s["behind_s"] == 0, "schedule: %s" % s)
    full = [x for x in s["intervals"] if x["interval_s"] >= 0.99]
    check(len(full) >= 2, "fewer than two whole seconds of schedule: %s" % s["intervals"])
    for x in full:
        check(abs(x["intended"] / x["interval_s"] - 1000) < 1, "the schedule asks for 1,000 a second: %s" % x)
        check(abs(x["submitted"] - x["intended"]) <= 0.05 * x["intended"] + 2, "submitted off schedule: %s" % x)
    check("valid: yes, the load generator kept to its schedule" in out, "no valid line in the summary:\n" + out)
    r, out = run(args, schema, "infinite", [])
    check(r["validity"]["valid"] is True and r["schedule"] is None, "infinite mode: %s" % r["validity"])
    check("  valid: yes\n" in out, "no valid line in the summary:\n" + out)


def main():
    return ht.run_modes({"starved": mode_starved, "normal": mode_normal}, __doc__)


if __name__ == "__main__":
    raise SystemExit(main())
