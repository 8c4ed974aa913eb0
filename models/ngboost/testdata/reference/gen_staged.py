"""Generate the reference NGBoost's staged scores on a small data set, for
TestStagedScoreMatchesReference in models/ngboost.

Run from the repository root, with Debian's Python and the reference source
(see ../shared/peers/README.md):

    export PYTHONPATH=../shared/peers/ngboost-reference OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
    /usr/bin/python3 models/ngboost/testdata/reference/gen_staged.py models/ngboost/testdata/reference

The data: 200 training and 100 test rows, three integer features in 0..30 (fewer
distinct values than max_bin, so that models/gbm's histogram trees search the same
splits as scikit-learn's exact trees), every test value also a training value of its
column (so that the two tree learners' different thresholds between training values
do not matter), and a heteroscedastic target: Normal, and exp(y/4) of it for the
LogNormal, the Exponential and the Gamma. Writes, per family, staged_<family>.csv with the columns x0,x1,x2,y,split
(train/test) and staged_<family>_scores.csv with, per iteration k = 0..n_estimators,
the training score before iteration k+1 (the reference's evals_result; empty at k =
n_estimators), and the mean NLL of staged_pred_dist after k iterations (k = 0 is the
marginal fit) on the training rows and on the test rows.

The staged NLL of the training rows is where the two implementations must agree:
scikit-learn puts a threshold halfway between the values present in the node, and
models/gbm halfway between adjacent values of the whole column, which sends the
training rows the same way but not every test row.
"""

import os
import sys

import numpy as np

import ngb_compat

ngb_compat.install()
from ngboost import NGBRegressor  # noqa: E402
from ngboost.distns import Exponential, Gamma, LogNormal, Normal  # noqa: E402
from ngboost.scores import LogScore  # noqa: E402

N_ESTIMATORS = 100
LEARNING_RATE = 0.05


def make_data(rng):
    x = rng.integers(0, 31, size=(200, 3)).astype(float)
    xt = np.empty((100, 3))
    for j in range(3):
        xt[:, j] = rng.choice(x[:, j], size=100)

    def target(x):
        mu = 3 * np.sin(x[:, 0] / 5) + x[:, 1] / 10
        sd = 0.3 + x[:, 1] / 20
        return mu, sd

    mu, sd = target(x)
    y = mu + sd * rng.standard_normal(200)
    mut, sdt = target(xt)
    yt = mut + sdt * rng.standard_normal(100)
    return x, y, xt, yt


def main(out):
    rng = np.random.default_rng(20260601)
    x, y, xt, yt = make_data(rng)
    families = (
        ("normal", Normal, lambda v: v),
        ("lognormal", LogNormal, lambda v: np.exp(v / 4)),
        ("exponential", Exponential, lambda v: np.exp(v / 4)),
        ("gamma", Gamma, lambda v: np.exp(v / 4)),
    )
    for name, dist, f in families:
        fy, fyt = f(y), f(yt)
        ngb = NGBRegressor(Dist=dist, Score=LogScore, n_estimators=N_ESTIMATORS,
                           learning_rate=LEARNING_RATE, minibatch_frac=1.0, col_sample=1.0,
                           natural_gradient=True, verbose=False, random_state=0)
        ngb.fit(x, fy)
        train = ngb.evals_result["train"]["LOGSCORE"]
        def staged(xs, ys):
            out = [float(-dist(np.tile(ngb.init_params, (len(ys), 1)).T).logpdf(ys).mean())]
            for d in ngb.staged_pred_dist(xs):
                out.append(float(-d.logpdf(ys).mean()))
            return out

        train_nll, test = staged(x, fy), staged(xt, fyt)
        with open(os.path.join(out, f"staged_{name}.csv"), "w") as fh:
            fh.write("x0,x1,x2,y,split\n")
            for xs, ys, split in ((x, fy, "train"), (xt, fyt, "test")):
                for row, v in zip(xs, ys):
                    fh.write(f"{row[0]:.0f},{row[1]:.0f},{row[2]:.0f},{v!r},{split}\n")
        with open(os.path.join(out, f"staged_{name}_scores.csv"), "w") as fh:
            fh.write("iteration,train_score,train_nll,test_nll\n")
            for k, v in enumerate(test):
                tr = repr(float(train[k])) if k < len(train) else ""
                fh.write(f"{k},{tr},{train_nll[k]!r},{v!r}\n")


if __name__ == "__main__":
    main(sys.argv[1])
