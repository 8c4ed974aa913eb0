package scoring_test

import (
	"fmt"

	"github.com/sqpredict/sqpredict/scoring"
)

// ExampleSpeculate scores the speculation tree of paper 001 Figure 5: three changes
// that all conflict, with P-succ 0.9, 0.8 and 0.7 and P-conf 0.1 for every pair. The
// build of C_3 on C_1 and C_2 is needed with P-succ_1 × P-succ_2 × (1 − P-conf_{1,2})
// (Equation 5); a capacity of four selects the four most likely builds.
func ExampleSpeculate() {
	q := scoring.Queue{
		Changes: []scoring.Change{{PSucc: 0.9}, {PSucc: 0.8}, {PSucc: 0.7}},
		Conflicts: []scoring.Conflict{
			{A: 0, B: 1, PConf: 0.1}, {A: 0, B: 2, PConf: 0.1}, {A: 1, B: 2, PConf: 0.1},
		},
	}
	plan, err := scoring.Speculate(q, scoring.Config{Policy: scoring.PolicySQ2019, Capacity: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range plan.Nodes {
		fmt.Printf("C%d landed %v rejected %v: P-needed %.4g, %v\n", n.Change+1, n.Landed, n.Rejected, n.PNeeded, n.Action)
	}
	// Output:
	// C1 landed [] rejected []: P-needed 1, start
	// C2 landed [0] rejected []: P-needed 0.9, start
	// C3 landed [0 1] rejected []: P-needed 0.648, start
	// C3 landed [0] rejected [1]: P-needed 0.252, start
}

// ExampleFinishBeforeProb is worked example 3 of paper 000 §VII: the ahead change x
// arrives at 0 with a 35±6 minute build, the new change y one minute later with 15±3.
func ExampleFinishBeforeProb() {
	fmt.Printf("P(FT_y < FT_x) = %.4f\n", scoring.FinishBeforeProb(0, 35, 6, 1, 15, 3))
	// Output:
	// P(FT_y < FT_x) = 0.9977
}

// ExampleBestBatchSize finds the best one-phase batch for changes that succeed 90% of
// the time: 1 + 1/b − 0.9^b is least at b = 4.
func ExampleBestBatchSize() {
	r, err := scoring.BestBatchSize(scoring.OnePhase, 0.9, 32)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("best b = %d, %.4g builds per change\n", r.Best, r.Cost)
	// Output:
	// best b = 4, 0.5939 builds per change
}
