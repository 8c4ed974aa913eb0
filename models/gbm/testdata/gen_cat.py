#!/usr/bin/env python3
"""Makes the cat_* test vectors with the LightGBM 4.6.0 command-line program.

Step 1 (no argument) writes cat_train.csv (500 rows: two categorical columns c0 with
12 categories and c1 with 3, two numerical columns with a few distinct values, a
regression target y and a 0/1 label yb) and cat_test.csv (the training rows followed
by rows with unseen categories), trains the models listed in CASES with LightGBM on
one thread and keeps LightGBM's model and its predict_raw_score output on cat_test.csv:

    cat_<case>.model, cat_<case>_raw.txt

Step 2 ("ours") runs LightGBM's predict on the models this package wrote for the same
cases (cat_<case>_ours.model, made by `go test -run TestCategoricalMatchesLightGBM
-update ./models/gbm`) and keeps LightGBM's raw scores as cat_<case>_ours_lgb_raw.txt.

    LIGHTGBM=/work/shared/peers/lightgbm-4.6.0/lightgbm python3 gen_cat.py [ours]

Standard library only; fixed seed.
"""
import math
import os
import random
import subprocess
import sys
import tempfile

# name -> (label column, objective, extra LightGBM parameters). The parameters are
# repeated in cat_cases.txt, which the Go test reads, so both sides train alike.
CASES = {
    "reg_default": ("y", "regression", "num_iterations=15 num_leaves=8 learning_rate=0.2 min_data_in_leaf=10"),
    "reg_tuned": ("y", "regression", "num_iterations=20 num_leaves=12 learning_rate=0.15 min_data_in_leaf=5 "
                  "min_data_per_group=15 cat_smooth=4 cat_l2=2 max_cat_threshold=3 max_cat_to_onehot=4 lambda_l2=0.5"),
    "bin_tuned": ("yb", "binary", "num_iterations=20 num_leaves=10 learning_rate=0.2 min_data_in_leaf=8 "
                  "min_data_per_group=20 cat_smooth=6 cat_l2=1 max_cat_threshold=4"),
}

COMMON = "num_threads=1 deterministic=true force_col_wise=true precise_float_parser=true verbosity=-1"


def make_data(here):
    rng = random.Random(16)
    w0 = [30, 8, 25, 4, 60, 12, 5, 40, 18, 9, 6, 20]
    e0 = [0.0, 2.5, -1.0, 3.0, 0.5, -2.0, 1.5, 1.0, -0.5, 2.0, -3.0, 0.2]
    e1 = [0.0, 1.2, -0.8]
    rows = []
    for _ in range(500):
        c0 = rng.choices(range(12), weights=w0)[0]
        c1 = rng.choices(range(3), weights=[5, 3, 2])[0]
        x2 = float(rng.randrange(8))
        x3 = rng.randrange(-4, 7) * 0.5
        f = e0[c0] + e1[c1] + 0.3 * x2 - 0.2 * x3
        y = f + rng.gauss(0, 0.7)
        yb = 1 if rng.random() < 1 / (1 + math.exp(-(f - 0.8))) else 0
        rows.append((y, yb, c0, c1, x2, x3))
    with open(os.path.join(here, "cat_train.csv"), "w") as f:
        f.write("y,yb,c0,c1,x2,x3\n")
        for r in rows:
            f.write(",".join(repr(float(v)) for v in r) + "\n")
    extra = [(0, 0, 12, 0, 3, 1.0), (0, 0, 40, 1, 0, -2.0), (0, 0, 3, 5, 7, 3.0),
             (0, 0, 1, 2, 8, 0.5), (0, 0, 7, 0, -1, -3.0)]
    # The test file has the label y first and the four features, as the models see them.
    with open(os.path.join(here, "cat_test.csv"), "w") as f:
        f.write("y,c0,c1,x2,x3\n")
        for r in rows + extra:
            f.write(",".join(repr(float(v)) for v in (r[0],) + r[2:]) + "\n")
    return rows


def run(lgb, args):
    subprocess.run([lgb] + args.split(), check=True, stdout=subprocess.DEVNULL)


def predict(lgb, here, model, out):
    run(lgb, f"task=predict data={os.path.join(here, 'cat_test.csv')} header=true label_column=name:y "
             f"input_model={model} output_result={out} predict_raw_score=true {COMMON}")


def main():
    lgb = os.environ.get("LIGHTGBM", "/work/shared/peers/lightgbm-4.6.0/lightgbm")
    here = os.path.dirname(os.path.abspath(__file__))
    if len(sys.argv) > 1 and sys.argv[1] == "ours":
        for name in CASES:
            predict(lgb, here, os.path.join(here, f"cat_{name}_ours.model"),
                    os.path.join(here, f"cat_{name}_ours_lgb_raw.txt"))
        return
    rows = make_data(here)
    with open(os.path.join(here, "cat_cases.txt"), "w") as f:
        for name, (label, obj, params) in CASES.items():
            f.write(f"{name} label={label} objective={obj} {params}\n")
    for name, (label, obj, params) in CASES.items():
        model = os.path.join(here, f"cat_{name}.model")
        li = 0 if label == "y" else 1
        with tempfile.TemporaryDirectory() as tmp:
            train = os.path.join(tmp, "train.csv")
            with open(train, "w") as f:
                f.write(f"{label},c0,c1,x2,x3\n")
                for r in rows:
                    f.write(",".join(repr(float(v)) for v in (r[li],) + r[2:]) + "\n")
            run(lgb, f"task=train data={train} header=true label_column=name:{label} "
                     f"categorical_feature=name:c0,c1 objective={obj} {params} "
                     f"output_model={model} {COMMON}")
        predict(lgb, here, model, os.path.join(here, f"cat_{name}_raw.txt"))


if __name__ == "__main__":
    main()
