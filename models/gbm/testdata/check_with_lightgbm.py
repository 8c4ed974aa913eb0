"""Check models/gbm's test data against LightGBM itself.

LightGBM cannot be installed in the build environment of this repository, so this
script has not been run there. With `pip install lightgbm numpy` it checks:

1. that LightGBM's predictions for the reference models (genlin_fmtp_*.model, written
   by LightGBM) equal the stored *_true_predictions.txt, i.e. the data is consistent;
2. that LightGBM loads the models written by models/gbm's WriteLightGBM
   (gbm_written_*.golden, regenerated with `go test -run TestWrittenGolden -update`)
   and predicts what models/gbm predicts (gbm_written_*_predictions.golden).

Usage: python3 check_with_lightgbm.py   (from this directory)
"""

import sys

import lightgbm as lgb
import numpy as np

RTOL = 1e-9  # the repository's contract with LightGBM's predictions


def check(model_file, features_file, predictions_file):
    booster = lgb.Booster(model_file=model_file)
    x = np.loadtxt(features_file, delimiter="\t", ndmin=2)
    want = np.loadtxt(predictions_file)
    got = booster.predict(x)
    worst = np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-300))
    ok = np.allclose(got, want, rtol=RTOL, atol=0)
    print(f"{'ok  ' if ok else 'FAIL'} {model_file}: {len(want)} rows, worst relative error {worst:.3g}")
    return ok


def main():
    results = [
        check(f"genlin_fmtp_{name}.model", f"genlin_fmtp_{name}_features.tsv",
              f"genlin_fmtp_{name}_true_predictions.txt")
        for name in ("gamma_AvgClaimAmount", "poisson_Frequency", "tweedie_PurePremium")
    ]
    results += [
        check(f"gbm_written_{kind}.golden", "gbm_written_features.tsv",
              f"gbm_written_{kind}_predictions.golden")
        for kind in ("regression", "binary")
    ]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
