package server_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/server"
)

// series returns the label sets of metric name in reg, each as "k=v,k=v", sorted.
func series(t *testing.T, reg *prometheus.Registry, name string) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var kv []string
			for _, l := range m.GetLabel() {
				kv = append(kv, l.GetName()+"="+l.GetValue())
			}
			out = append(out, strings.Join(kv, ","))
		}
	}
	slices.Sort(out)
	return out
}

// TestMetricsBoundedLabels: predictions are counted by kind and role, never by
// version, and predictd_model_info has exactly one series per role serving, following
// reloads and unloads. Issue 14 item 7.
func TestMetricsBoundedLabels(t *testing.T) {
	e := newTestEnv(t, server.Config{}, true)
	info := func() []string { return series(t, e.promReg, "predictd_model_info") }
	if got, want := info(), []string{"role=champion,version=" + e.v1}; !slices.Equal(got, want) {
		t.Errorf("after loading v1: predictd_model_info series %q, want %q", got, want)
	}
	if _, err := e.client.PredictSuccess(testCtx(t), &pb.PredictSuccessRequest{Changes: []*pb.SuccessQuery{{Change: &pb.Change{ChangeId: "C1"}}}}); err != nil {
		t.Fatal(err)
	}
	if got, want := series(t, e.promReg, "predictd_predictions_total"), []string{"kind=success,role=champion"}; !slices.Equal(got, want) {
		t.Errorf("predictd_predictions_total series %q, want %q", got, want)
	}
	if err := e.reloader.Reload(registry.RoleChampion, e.v2); err != nil {
		t.Fatal(err)
	}
	if err := e.reloader.Reload(registry.RoleChallenger, e.v1); err != nil {
		t.Fatal(err)
	}
	if got, want := info(), []string{"role=challenger,version=" + e.v1, "role=champion,version=" + e.v2}; !slices.Equal(got, want) {
		t.Errorf("after loading v2 and a challenger: predictd_model_info series %q, want %q", got, want)
	}
	events := make(chan registry.Event, 1)
	events <- registry.Event{Role: registry.RoleChallenger} // the challenger pointer cleared
	close(events)
	e.reloader.Follow(events)
	if got, want := info(), []string{"role=champion,version=" + e.v2}; !slices.Equal(got, want) {
		t.Errorf("after unloading the challenger: predictd_model_info series %q, want %q", got, want)
	}
}
