#!/usr/bin/env python3
"""How well could any rule tell a pour from a big drink on a scale?

Reads what `detectorLossFeatures` wrote (LOSS_FEATURES=DIR SWEEP=1000 scripts/test.sh
--filter detectorLossFeatures) and prints, per situation, the share of the intake that
misjudged losses put in or took out:

- as the detector judged (pace over the time away less 2.5 s of handling);
- the best rule of that form for each handling time, chosen on nine tenths of the
  bottles and scored on the tenth left out, ten times over (so not fitted to what it scores);
- gradient-boosted trees on everything the scale's stream offers (loss, time away, share
  of the bottle, what was left, the next event and how soon), likewise scored on bottles
  left out, at thresholds from "call it a drink" to "call it a pour". This part needs
  scikit-learn: python3 -m venv /tmp/venv && /tmp/venv/bin/pip install scikit-learn,
  then run this script with /tmp/venv/bin/python.

Usage: scripts/pour-floor.py DIR
"""
import csv
import math
import sys
from collections import defaultdict

SITUATIONS = ("pours", "bigDrinks", "mixed")


def load(folder):
    rows = [r for r in csv.DictReader(open(f"{folder}/losses.csv")) if r["truth"] in ("sip", "pour")]
    intake = defaultdict(float)
    for r in csv.DictReader(open(f"{folder}/intake.csv")):
        intake[r["situation"]] += float(r["intake_ml"])
    for r in rows:
        r["ml"] = float(r["ml"])
        r["away"] = float(r["away_s"])
        r["pour"] = r["truth"] == "pour"
    return rows, intake


def report(name, rows, intake, judged_pour):
    """Signed share of each situation's intake that the misjudged losses moved."""
    moved = defaultdict(float)
    wrong = 0
    for r, pour in zip(rows, judged_pour):
        if pour != r["pour"]:
            wrong += 1
            moved[r["situation"]] += r["ml"] if r["pour"] else -r["ml"]
    shares = "  ".join(f"{s} {100 * moved[s] / intake[s]:+6.2f} %" for s in SITUATIONS if intake[s])
    print(f"{name:58} misjudged {wrong:4d} of {len(rows)}  {shares}")


def pace_rule(handling, threshold):
    return lambda r: r["ml"] >= 100 and r["ml"] / max(r["away"] - handling, 0.5) >= threshold


def folds(rows, k=10):
    """Bottles (seeds) split ten ways: a bottle's losses stay together."""
    return [[i for i, r in enumerate(rows) if int(r["seed"]) % k == f] for f in range(k)]


def main():
    rows, intake = load(sys.argv[1] if len(sys.argv) > 1 else "/tmp/losses")
    bottles = len({(r["situation"], r["seed"]) for r in rows})
    print(f"{len(rows)} losses of 90 mL or more across a lift, from {bottles} bottles on scales")
    report("as the detector judged", rows, intake, [r["judged"] == "pour" for r in rows])
    for handling in (1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5):
        judged = [False] * len(rows)
        chosen = set()
        for test in folds(rows):
            held_out = set(test)
            train = [r for i, r in enumerate(rows) if i not in held_out]
            best = min(range(14, 60), key=lambda t: sum(pace_rule(handling, t)(r) != r["pour"] for r in train))
            chosen.add(best)
            for i in test:
                judged[i] = pace_rule(handling, best)(rows[i])
        report(f"time away less {handling} s, best pace ({'/'.join(map(str, sorted(chosen)))})", rows, intake, judged)
    try:
        import numpy as np
        from sklearn.ensemble import GradientBoostingClassifier
        from sklearn.model_selection import GroupKFold, cross_val_predict
    except ImportError:
        print("(scikit-learn is not installed: the classifier's part is left out; see this script's help)")
        return

    def features(r, given):
        left = max(float(r["left_ml"] or 0), 0)
        after = float(r["next_after_s"]) if r["next_after_s"] else 600
        x = [math.log(r["ml"]), math.log(max(r["away"], 0.1))]
        if "share" in given:
            x += [r["ml"] / (r["ml"] + left), left]
        if "next" in given:
            x += [1.0 if r["next"] == "refill" else 0.0, min(after, 600)]
        return x

    y = np.array([r["pour"] for r in rows])
    groups = np.array([int(r["seed"]) for r in rows])
    for given, thresholds in (((), (0.5,)), (("share",), (0.5,)), (("next",), (0.5,)),
                              (("share", "next"), (0.2, 0.3, 0.35, 0.4, 0.5))):
        x = np.array([features(r, given) for r in rows])
        probability = cross_val_predict(GradientBoostingClassifier(max_depth=3, n_estimators=150, random_state=1), x, y,
                                        groups=groups, cv=GroupKFold(10), method="predict_proba")[:, 1]
        for threshold in thresholds:
            named = "loss, time away" + "".join(f", {g}" for g in given)
            report(f"trees on {named}, pour above {threshold}", rows, intake, list(probability > threshold))


if __name__ == "__main__":
    main()
