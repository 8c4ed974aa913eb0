package training

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"90d", 90 * 24 * time.Hour, false},
		{"1.5d", 36 * time.Hour, false},
		{"36h", 36 * time.Hour, false},
		{"90m", 90 * time.Minute, false},
		{"d", 0, true},
		{"NaNd", 0, true},
		{"ninety", 0, true},
	} {
		got, err := ParseDuration(tc.in)
		if (err != nil) != tc.wantErr || (err == nil && time.Duration(got) != tc.want) {
			t.Errorf("ParseDuration(%q) = %v, %v, want %v (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err != nil && !errors.Is(err, ErrConfig) {
			t.Errorf("ParseDuration(%q) error %v does not wrap ErrConfig", tc.in, err)
		}
	}
	if s := Duration(90 * 24 * time.Hour).String(); s != "90d" {
		t.Errorf("String = %q, want 90d", s)
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, json string
		wantErr    string
	}{
		{"full", `{"repo": "ios", "as_of": "2026-04-01T00:00:00Z", "window": "30d", "holdout_fraction": 0.25,
			"challengers": ["gbm-success"], "success": {"c": 0.5}, "buildtime": {"n_estimators": 50},
			"gbm": {"num_leaves": "15"}, "gates": {"success.log_loss": {"max_rel": 0.01}}, "seed": 3, "retain": 4}`, ""},
		{"unknown field", `{"windw": "30d"}`, "windw"},
		{"bad window", `{"window": "month"}`, "month"},
		{"bad gate metric", `{"gates": {"success.speed": {"max_rel": 0.1}}}`, "success.speed"},
		{"negative gate", `{"gates": {"success.auc": {"max_abs": -1}}}`, "negative"},
		{"bad challenger", `{"challengers": ["svm"]}`, "svm"},
		{"bad relative", `{"buildtime": {"relative": "yes"}}`, "buildtime.relative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".json")
			if err := os.WriteFile(path, []byte(tc.json), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := LoadConfig(path)
			if tc.wantErr != "" {
				if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("LoadConfig = %v, want ErrConfig mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadConfig: %v", err)
			}
			if c.Repo != "ios" || c.window() != 30*24*time.Hour || c.holdout() != 0.25 || !c.has(ChallengerGBMSuccess) ||
				c.Success.C != 0.5 || c.BuildTime.NEstimators != 50 || c.GBM["num_leaves"] != "15" ||
				c.gates()["success.log_loss"].MaxRel != 0.01 || len(c.gates()) != 1 || c.Seed != 3 || c.retain() != 4 ||
				!c.AsOf.Equal(time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)) {
				t.Errorf("LoadConfig = %+v", c)
			}
		})
	}
	var zero Config
	if zero.window() != DefaultWindow || zero.holdout() != DefaultHoldoutFraction || zero.retain() != DefaultRetain || len(zero.gates()) != len(DefaultGates()) {
		t.Errorf("zero Config defaults wrong")
	}
}

func TestParseChallengers(t *testing.T) {
	got, err := ParseChallengers(" gbm-success,ngboost-lognormal,gbm-success,")
	if err != nil || !slices.Equal(got, []string{ChallengerGBMSuccess, ChallengerNGBoostLogNormal}) {
		t.Errorf("ParseChallengers = %v, %v", got, err)
	}
	if _, err := ParseChallengers("gbm"); !errors.Is(err, ErrConfig) {
		t.Errorf("ParseChallengers(gbm) = %v, want ErrConfig", err)
	}
}
