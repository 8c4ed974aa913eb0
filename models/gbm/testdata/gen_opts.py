#!/usr/bin/env python3
"""Makes the opt_* test vectors with the LightGBM 4.6.0 command-line program.

Writes opt_train.csv (400 rows: y, a 0/1 label yb, a count target yc, a weight w and
three numerical features with a few distinct values each, x1 with missing values) and
trains one LightGBM model per case in CASES on one thread, keeping LightGBM's
predict_raw_score output on the training rows as opt_<case>_raw.txt. opt_cases.txt
lists the cases for the Go test (lgbmatch_test.go), which fits the same data with the
same parameters.

    LIGHTGBM=/work/shared/peers/lightgbm-4.6.0/lightgbm python3 gen_opts.py

Standard library only; fixed seed.
"""
import math
import os
import random
import subprocess
import tempfile

# name -> (label column, weighted, LightGBM parameters).
BASE = "num_iterations=25 num_leaves=10 learning_rate=0.3 min_data_in_leaf=8"
CASES = {
    "reg_plain": ("y", False, f"objective=regression {BASE}"),
    "bin_plain": ("yb", False, f"objective=binary {BASE}"),
    "reg_max_delta_step": ("y", False, f"objective=regression {BASE} max_delta_step=0.4"),
    "bin_max_delta_step": ("yb", False, f"objective=binary {BASE} max_delta_step=0.3 lambda_l2=1"),
    "reg_l1_min_gain": ("y", False, f"objective=regression {BASE} lambda_l1=3 min_gain_to_split=2"),
    "bin_l1_min_gain": ("yb", False, f"objective=binary {BASE} lambda_l1=0.5 min_gain_to_split=0.3"),
    "bin_scale_pos_weight": ("yb", False, f"objective=binary {BASE} scale_pos_weight=2.5"),
    "bin_is_unbalance": ("yb", False, f"objective=binary {BASE} is_unbalance=true"),
    "reg_weighted": ("y", True, f"objective=regression {BASE}"),
    "bin_weighted": ("yb", True, f"objective=binary {BASE} scale_pos_weight=1.5"),
    "poisson": ("yc", False, f"objective=poisson {BASE}"),
    "poisson_weighted": ("yc", True, f"objective=poisson {BASE} poisson_max_delta_step=0.3 max_delta_step=0.8"),
    "l1": ("y", False, f"objective=regression_l1 {BASE}"),
    "huber": ("y", False, f"objective=huber {BASE} alpha=1.5"),
    "huber_weighted": ("y", True, f"objective=huber {BASE}"),
    "quantile": ("y", False, f"objective=quantile {BASE} alpha=0.3"),
    "monotone": ("y", False, f"objective=regression {BASE} monotone_constraints=1,-1,0"),
    "monotone_binary": ("yb", True, f"objective=binary {BASE} monotone_constraints=1,0,1 lambda_l1=0.2"),
    "quantile_l2": ("y", False, f"objective=quantile {BASE} alpha=0.8 lambda_l2=2"),
}

COMMON = "num_threads=1 deterministic=true force_col_wise=true precise_float_parser=true verbosity=-1"


def main():
    lgb = os.environ.get("LIGHTGBM", "/work/shared/peers/lightgbm-4.6.0/lightgbm")
    here = os.path.dirname(os.path.abspath(__file__))
    rng = random.Random(17)
    rows = []
    for _ in range(400):
        x0 = float(rng.randrange(10))
        x1 = rng.randrange(-3, 4) * 0.25 if rng.random() > 0.15 else float("nan")
        x2 = float(rng.randrange(6)) - 2
        f = 0.4 * x0 - (1.5 if math.isnan(x1) else 3 * x1) + 0.5 * x2 * x2
        y = f + rng.gauss(0, 1)
        yb = 1 if rng.random() < 1 / (1 + math.exp(-(f - 2))) else 0
        lam = math.exp(0.3 * f - 0.5)
        # Poisson count by inversion, capped so that the file stays small.
        k, p, u = 0, math.exp(-lam), rng.random()
        c = p
        while u > c and k < 50:
            k += 1
            p *= lam / k
            c += p
        w = rng.choice([0.5, 1.0, 1.0, 2.0, 3.0])
        rows.append((y, yb, float(k), w, x0, x1, x2))
    with open(os.path.join(here, "opt_train.csv"), "w") as f:
        f.write("y,yb,yc,w,x0,x1,x2\n")
        for r in rows:
            f.write(",".join("nan" if math.isnan(v) else repr(float(v)) for v in r) + "\n")
    with open(os.path.join(here, "opt_cases.txt"), "w") as f:
        for name, (label, weighted, params) in CASES.items():
            f.write(f"{name} label={label} weighted={int(weighted)} {params}\n")
    col = {"y": 0, "yb": 1, "yc": 2}
    for name, (label, weighted, params) in CASES.items():
        with tempfile.TemporaryDirectory() as tmp:
            train = os.path.join(tmp, "train.csv")
            with open(train, "w") as f:
                f.write(f"{label},w,x0,x1,x2\n")
                for r in rows:
                    vals = (r[col[label]], r[3]) + r[4:]
                    f.write(",".join("nan" if math.isnan(v) else repr(float(v)) for v in vals) + "\n")
            model = os.path.join(tmp, "m.txt")
            weight = "weight_column=name:w" if weighted else "ignore_column=name:w"
            # LightGBM counts the weight column among the features (it never splits
            # on it), so its monotone_constraints get a leading 0.
            lgb_params = [p.replace("monotone_constraints=", "monotone_constraints=0,") for p in params.split()]
            subprocess.run([lgb, "task=train", f"data={train}", "header=true", f"label_column=name:{label}",
                            weight, f"output_model={model}"] + lgb_params + COMMON.split(),
                           check=True, stdout=subprocess.DEVNULL)
            subprocess.run([lgb, "task=predict", f"data={train}", "header=true", f"label_column=name:{label}",
                            weight, f"input_model={model}", "predict_raw_score=true",
                            f"output_result={os.path.join(here, f'opt_{name}_raw.txt')}"] + COMMON.split(),
                           check=True, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
