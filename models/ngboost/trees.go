package ngboost

import (
	"fmt"
	"sync"

	"github.com/sqpredict/sqpredict/models/gbm"
)

// growTrees fits the iteration's tree of each parameter to its gradient column and
// records every batch row's leaves in leafOf. With two parameters and two threads or
// more, the two trees grow at the same time, each on half of the threads: a depth-3
// tree has too few leaves, and each leaf too few features, for models/gbm to keep two
// threads busy on one tree, while the two trees are independent. Each tree is the one
// a single call would grow (models/gbm's trees do not depend on its thread count), so
// the model does not depend on the number of threads.
func (b *booster) growTrees() ([2]*gbm.Tree, error) {
	var trees [2]*gbm.Tree
	grads := [2][]float64{b.grad0, b.grad1}
	np := b.cfg.Dist.nParams()
	if np < 2 || b.threads < 2 {
		for k := range np {
			t, err := gbm.GrowTreeLeaves(b.ds, grads[k], b.hess, b.batch, b.cols, b.tree, b.leafOf[k])
			if err != nil {
				return trees, fmt.Errorf("parameter %d: %w", k, err)
			}
			trees[k] = t
		}
		return trees, nil
	}
	cfg := b.tree
	cfg.NumThreads = max(1, b.threads/2)
	var errs [2]error
	var wg sync.WaitGroup
	wg.Go(func() {
		trees[1], errs[1] = gbm.GrowTreeLeaves(b.ds, grads[1], b.hess, b.batch, b.cols, cfg, b.leafOf[1])
	})
	trees[0], errs[0] = gbm.GrowTreeLeaves(b.ds, grads[0], b.hess, b.batch, b.cols, cfg, b.leafOf[0])
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			return trees, fmt.Errorf("parameter %d: %w", k, err)
		}
	}
	return trees, nil
}
