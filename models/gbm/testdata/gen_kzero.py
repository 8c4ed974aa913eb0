#!/usr/bin/env python3
"""Makes the kzero_* test vectors with the LightGBM 4.6.0 command-line program.

LightGBM sets every input value with |x| <= kZeroThreshold (1.0000000180025095e-35) to 0
before binning and before walking the trees, and puts bin bounds at +-kZeroThreshold
when a feature has values on both sides of 0, so rows at exactly +-kZeroThreshold take
the branch of 0. This script trains a bagged binary and a regression model on features
that straddle 0, then asks LightGBM for the raw scores of edge rows holding +-kZeroThreshold,
its neighbours one ulp away, +-1e-36, +-0 and ordinary values.

    LIGHTGBM=/work/shared/peers/lightgbm-4.6.0/lightgbm python3 gen_kzero.py

Standard library only; fixed seed. Writes kzero_{binary,regression}.model,
kzero_edge.csv and kzero_{binary,regression}_raw.txt, deletes its training file.
"""
import os
import random
import struct
import subprocess
import tempfile

KZ = 1.0000000180025095e-35


def nextafter(x, toward):
    """One ulp from x toward +inf (toward > x) or -inf (no math.nextafter before 3.9 needed)."""
    b = struct.unpack("<q", struct.pack("<d", x))[0]
    if x == 0:
        return 5e-324 if toward > 0 else -5e-324
    if (x > 0) == (toward > x):
        b += 1
    else:
        b -= 1
    return struct.unpack("<d", struct.pack("<q", b))[0]


def fmt(v):
    return repr(float(v))


def main():
    lgb = os.environ.get("LIGHTGBM", "/work/shared/peers/lightgbm-4.6.0/lightgbm")
    here = os.path.dirname(os.path.abspath(__file__))
    rng = random.Random(15)
    edge_vals = [KZ, -KZ, nextafter(KZ, 1), nextafter(KZ, 0), nextafter(-KZ, -1),
                 nextafter(-KZ, 0), 1e-36, -1e-36, 0.0, -0.0, 1e-30, -1e-30]
    # Training rows: three features, each a mix of exact zeros, tiny values on both
    # sides of 0 and ordinary values, so that LightGBM places bounds at +-kZeroThreshold.
    def feature():
        u = rng.random()
        if u < 0.3:
            return 0.0
        if u < 0.45:
            return rng.choice(edge_vals)
        return rng.uniform(-2, 2)
    train = []
    for _ in range(3000):
        x = [feature() for _ in range(3)]
        s = (x[0] > 0) * 1.5 - (x[1] < 0) * 1.0 + 0.5 * x[2] + rng.gauss(0, 0.5)
        yb = 1 if s > 0.2 else 0
        train.append((s, yb, x))
    edge = []
    for _ in range(300):
        edge.append([rng.choice(edge_vals) if rng.random() < 0.8 else rng.uniform(-2, 2) for _ in range(3)])
    with tempfile.TemporaryDirectory() as tmp:
        for name, col, params in [
            ("binary", 1, ["objective=binary", "bagging_fraction=0.7", "bagging_freq=1", "seed=7"]),
            ("regression", 0, ["objective=regression"]),
        ]:
            tr = os.path.join(tmp, "train.csv")
            with open(tr, "w") as f:
                f.write("y,x0,x1,x2\n")
                for row in train:
                    f.write(",".join([fmt(row[col] if col == 1 else row[0])] + [fmt(v) for v in row[2]]) + "\n")
            model = os.path.join(here, "kzero_%s.model" % name)
            subprocess.run([lgb, "task=train", "data=" + tr, "header=true", "label_column=name:y",
                            "num_iterations=30", "num_leaves=15", "min_data_in_leaf=5",
                            "learning_rate=0.2", "num_threads=1", "precise_float_parser=true",
                            "deterministic=true", "output_model=" + model, "verbosity=-1"] + params,
                           check=True)
            ed = os.path.join(here, "kzero_edge.csv")
            with open(ed, "w") as f:
                f.write("y,x0,x1,x2\n")
                for x in edge:
                    f.write(",".join(["0"] + [fmt(v) for v in x]) + "\n")
            subprocess.run([lgb, "task=predict", "data=" + ed, "header=true", "label_column=name:y",
                            "input_model=" + model, "predict_raw_score=true", "precise_float_parser=true",
                            "num_threads=1", "verbosity=-1",
                            "output_result=" + os.path.join(here, "kzero_%s_raw.txt" % name)], check=True)


if __name__ == "__main__":
    main()
