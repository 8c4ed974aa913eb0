#!/usr/bin/env python3
"""Makes the miss_* test vectors with the LightGBM 4.6.0 command-line program.

Writes miss_train.csv: 3000 rows of a 0/1 label yb, a regression target y and three
non-negative numerical features with missing values, shaped like the success table's
author_fail_rate_10 (the feature behind the uncalibrated GBM challenger of
BENCHMARKS.md):

  x0  33% zeros, 2% NaN, 32 other values k/40 (k = 1..32) with falling frequencies:
      its most frequent bin is bin 0 (the zero bin), which LightGBM leaves out of its
      histograms;
  x1  50% zeros, 5% NaN, 11 other values: the same case on a coarser feature;
  x2  75% ones, 10% zeros, 5% NaN, 6 other values: a most frequent bin that is not
      bin 0, whose sums LightGBM derives from the leaf's (FixHistogram);
  x3  80% NaN, 5% zeros, 8 other values: the NaN bin is the most frequent;
  x4  10% NaN, 30% zeros, values -5..5: the zero bin is the most frequent and not
      bin 0;
  x5  5% NaN, 80% zeros, 19 other values: bin 0 is the most frequent by LightGBM's
      kSparseThreshold (70%) too.

x3..x5 come from a second random stream, so that x0..x2 and the labels do not depend
on them; they only enter the "more_*" cases' labels.

Every distinct value has at least 5 rows, so LightGBM gives each its own bin as
models/gbm does, and the two agree on every split. It then trains one LightGBM model
per case in CASES on one thread and keeps its predict_raw_score output on the
training rows as miss_<case>_raw.txt; miss_cases.txt lists the cases for the Go test
(missing_test.go), which fits the same data with the same parameters.

    LIGHTGBM=/work/shared/peers/lightgbm-4.6.0/lightgbm python3 gen_missing.py

Standard library only; fixed seed.
"""
import collections
import math
import os
import random
import subprocess
import tempfile

# name -> (label column, features, LightGBM parameters). "x0" is the one-feature
# reproduction of the bug, with the parameters of BENCHMARKS.md.
CASES = {
    "x0_binary": ("yb", "x0", "objective=binary num_leaves=4 min_data_in_leaf=20 learning_rate=0.05 "
                  "num_iterations=9 lambda_l2=1"),
    "all_binary": ("yb", "x0,x1,x2", "objective=binary num_leaves=8 min_data_in_leaf=20 learning_rate=0.1 "
                   "num_iterations=30 lambda_l2=1"),
    "all_regression": ("y", "x0,x1,x2", "objective=regression num_leaves=8 min_data_in_leaf=10 "
                       "learning_rate=0.1 num_iterations=30"),
    "more_binary": ("yb2", "x3,x4,x5", "objective=binary num_leaves=8 min_data_in_leaf=20 learning_rate=0.1 "
                    "num_iterations=30 lambda_l2=1"),
    "more_regression": ("y2", "x0,x3,x4,x5", "objective=regression num_leaves=6 min_data_in_leaf=5 "
                        "learning_rate=0.2 num_iterations=20"),
}

COMMON = "num_threads=1 deterministic=true force_col_wise=true precise_float_parser=true verbosity=-1"


def draw(rng, p_zero, p_nan, values, weights):
    u = rng.random()
    if u < p_nan:
        return float("nan")
    if u < p_nan + p_zero:
        return 0.0
    return rng.choices(values, weights)[0]


def main():
    lgb = os.environ.get("LIGHTGBM", "/work/shared/peers/lightgbm-4.6.0/lightgbm")
    here = os.path.dirname(os.path.abspath(__file__))
    rng = random.Random(23)
    v0 = [k / 40 for k in range(1, 33)]
    w0 = [1 / (1 + 0.25 * k) ** 2 for k in range(1, 33)]
    v1 = [float(k) for k in range(1, 12)]
    w1 = [1 / k for k in range(1, 12)]
    v2 = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    w2 = [75, 2, 2, 2, 1.5, 1.5, 1]
    rows = []
    for _ in range(3000):
        x0 = draw(rng, 0.33, 0.02, v0, w0)
        x1 = draw(rng, 0.50, 0.05, v1, w1)
        x2 = draw(rng, 0.10, 0.05, v2, w2)
        # Failure risk rises with x0 and x1; a missing x0 is a new author (high risk).
        f = -1.6 + (1.2 if math.isnan(x0) else 3 * x0) + (0.1 * x1 if not math.isnan(x1) else -0.3)
        f += 0.2 * (x2 == 1.0)
        yb = 1 if rng.random() < 1 / (1 + math.exp(-f)) else 0
        y = f + rng.gauss(0, 0.5)
        rows.append((yb, y, x0, x1, x2))
    rng2 = random.Random(29)
    for i, r in enumerate(rows):
        x3 = draw(rng2, 0.05, 0.80, [float(k) for k in range(1, 9)], [1] * 8)
        x4 = draw(rng2, 0.30, 0.10, [float(k) for k in range(-5, 6) if k != 0], [1] * 10)
        x5 = draw(rng2, 0.80, 0.05, [k / 7 for k in range(1, 20)], [1] * 19)
        f = -0.5 + (0.8 if math.isnan(x3) else 0.2 * x3) + (0 if math.isnan(x4) else 0.3 * x4)
        f += 1 if math.isnan(x5) else -0.5 * x5
        yb2 = 1 if rng2.random() < 1 / (1 + math.exp(-f)) else 0
        y2 = f + rng2.gauss(0, 0.5)
        rows[i] = r + (yb2, y2, x3, x4, x5)
    for j in (2, 3, 4, 7, 8, 9):
        cnt = collections.Counter("nan" if math.isnan(r[j]) else r[j] for r in rows)
        assert min(cnt.values()) >= 5, (j, cnt)
    fmt = lambda v: "nan" if math.isnan(v) else repr(float(v))
    with open(os.path.join(here, "miss_train.csv"), "w") as f:
        f.write("yb,y,x0,x1,x2,yb2,y2,x3,x4,x5\n")
        for r in rows:
            f.write(",".join(fmt(v) for v in r) + "\n")
    with open(os.path.join(here, "miss_cases.txt"), "w") as f:
        for name, (label, feats, params) in CASES.items():
            f.write(f"{name} label={label} features={feats} {params}\n")
    col = {"yb": 0, "y": 1, "x0": 2, "x1": 3, "x2": 4, "yb2": 5, "y2": 6, "x3": 7, "x4": 8, "x5": 9}
    for name, (label, feats, params) in CASES.items():
        cols = [col[label]] + [col[c] for c in feats.split(",")]
        with tempfile.TemporaryDirectory() as tmp:
            train = os.path.join(tmp, "train.csv")
            with open(train, "w") as f:
                f.write(",".join([label] + feats.split(",")) + "\n")
                for r in rows:
                    f.write(",".join(fmt(r[c]) for c in cols) + "\n")
            model = os.path.join(tmp, "m.txt")
            subprocess.run([lgb, "task=train", f"data={train}", "header=true", f"label_column=name:{label}",
                            f"output_model={model}"] + params.split() + COMMON.split(),
                           check=True, stdout=subprocess.DEVNULL)
            subprocess.run([lgb, "task=predict", f"data={train}", "header=true", f"label_column=name:{label}",
                            f"input_model={model}", "predict_raw_score=true",
                            f"output_result={os.path.join(here, f'miss_{name}_raw.txt')}"] + COMMON.split(),
                           check=True, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
