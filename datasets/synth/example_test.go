package synth_test

import (
	"context"
	"fmt"
	"math"

	"github.com/sqpredict/sqpredict/datasets/synth"
)

// ExampleSimulate generates a day of the go monorepo and recomputes the ground truth of
// its first change from the hidden developer skill.
func ExampleSimulate() {
	w, err := synth.Simulate(context.Background(), synth.Config{Profile: "go", Days: 1, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := &w.History.Changes[0]
	var skill float64
	for _, d := range w.Developers {
		if d.Name == c.Author {
			skill = d.SkillAt(c.SubmittedAt)
		}
	}
	p := w.Params.Success.Prob(c, skill)
	fmt.Println("repo:", c.Repo, "first change:", c.ChangeID)
	fmt.Println("true_p_success recomputed:", math.Abs(p-c.TrueProbSuccess) < 1e-12)
	// Output:
	// repo: go first change: C0000001
	// true_p_success recomputed: true
}
