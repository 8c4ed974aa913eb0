package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoTrainerLinked: predictd loads bundles through modelset and must not link the
// training pipeline (issue 15 item 10): not training, its report and plotting, nor the
// scheduler.
func TestNoTrainerLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
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
