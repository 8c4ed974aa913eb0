package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestNoTrainerLinked: predictd loads bundles through modelset and must not link the
// training pipeline (issue 15 item 10): not training, its report and plotting, nor the
// scheduler. The packages predictd does load bundles through must be in the list, so
// that an empty or wrong list (go list printing nothing) cannot pass.
func TestNoTrainerLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	pkgs := strings.Fields(string(out))
	for _, want := range []string{
		"github.com/sqpredict/sqpredict/modelset",
		"github.com/sqpredict/sqpredict/internal/bundleload",
	} {
		if !slices.Contains(pkgs, want) {
			t.Errorf("go list -deps does not list %s among its %d packages", want, len(pkgs))
		}
	}
	for _, pkg := range pkgs {
		for _, banned := range []string{
			"github.com/sqpredict/sqpredict/training",
			"github.com/sqpredict/sqpredict/eval/report",
			"github.com/robfig/cron",
			"gonum.org/v1/plot",
		} {
			if pkg == banned || strings.HasPrefix(pkg, banned+"/") {
				t.Errorf("predictd links %s", pkg)
			}
		}
	}
}
