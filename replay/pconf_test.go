package replay

import "testing"

// TestPConfFrom checks that pconf:SRC gives the truth's P-succ and build times and SRC's
// P-conf on every change and edge of a world, for a constant source.
func TestPConfFrom(t *testing.T) {
	w, _ := smallWorld(t, 0.5, 3)
	p, err := ParseProbs(w, "pconf:constant:0.3,0.07")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "pconf:constant:0.3,0.07" || p.BuildFamily() != w.Family {
		t.Errorf("name %q family %v, want the spec and the world's %v", p.Name(), p.BuildFamily(), w.Family)
	}
	edges := 0
	for i := range w.Traffic.Changes {
		if p.PSucc(i) != w.PSucc[i] {
			t.Fatalf("change %d: P-succ %v, want the truth's %v", i, p.PSucc(i), w.PSucc[i])
		}
		if m, s := p.BuildTime(i); m != w.Mu[i] || s != w.Sigma[i] {
			t.Fatalf("change %d: build time (%v, %v), want the truth's (%v, %v)", i, m, s, w.Mu[i], w.Sigma[i])
		}
		for k := range w.Traffic.Changes[i].Ahead {
			if p.PConf(i, k) != 0.07 {
				t.Fatalf("change %d edge %d: P-conf %v, want the source's 0.07", i, k, p.PConf(i, k))
			}
			edges++
		}
	}
	if edges == 0 {
		t.Fatal("the world has no conflict edge")
	}
	for _, bad := range []string{"pconf:", "pconf:nonsense", "pconf:constant:2,0.1"} {
		if _, err := ParseProbs(w, bad); err == nil {
			t.Errorf("ParseProbs(%q): no error", bad)
		}
	}
}
