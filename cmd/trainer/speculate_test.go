package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/scoring"
)

// TestSpeculate runs the command on testdata/speculate_request.json: D102 has finished
// builds on both paths over the slow D101 and lands now; D103's build that assumed
// D102 rejected is aborted; D104 conflicts with nothing.
func TestSpeculate(t *testing.T) {
	out, _, err := runCmd(t, "speculate", "--in", filepath.Join("testdata", "speculate_request.json"))
	if err != nil {
		t.Fatal(err)
	}
	resp := &pb.SpeculationResponse{}
	if err := protojson.Unmarshal([]byte(out), resp); err != nil {
		t.Fatalf("output is not a SpeculationResponse: %v\n%s", err, out)
	}
	d := resp.GetDecisions()
	if len(d) != 4 || d[1].GetVerdict() != pb.Verdict_VERDICT_LAND || !slices.Equal(d[1].GetBypassedChangeIds(), []string{"D101"}) {
		t.Fatalf("decisions = %v, want D102 to land bypassing D101", d)
	}
	if d[2].GetWaitReason() != pb.WaitReason_WAIT_REASON_PATHS_PENDING || !slices.Equal(d[2].GetWaitingForChangeIds(), []string{"D101"}) {
		t.Errorf("decision on D103 = %v, want waiting for D101's paths", d[2])
	}
	actions := map[string]pb.NodeAction{}
	prev := 2.0
	for _, n := range resp.GetNodes() {
		if n.GetBuildId() != "" {
			actions[n.GetBuildId()] = n.GetAction()
		}
		if n.GetAction() != pb.NodeAction_NODE_ACTION_ABORT {
			if n.GetPNeeded() > prev || n.GetPNeeded() < 0.01 {
				t.Errorf("node %v out of order or below the threshold", n)
			}
			prev = n.GetPNeeded()
		}
	}
	want := map[string]pb.NodeAction{"b1": pb.NodeAction_NODE_ACTION_KEEP, "b4": pb.NodeAction_NODE_ACTION_KEEP, "b5": pb.NodeAction_NODE_ACTION_ABORT}
	for id, a := range want {
		if actions[id] != a {
			t.Errorf("build %s: action %v, want %v", id, actions[id], a)
		}
	}
}

func TestSpeculateErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr error
	}{
		{"no input", []string{"speculate"}, errUsage},
		{"missing file", []string{"speculate", "--in", filepath.Join(dir, "none.json")}, os.ErrNotExist},
		{"unknown change", []string{"speculate", "--in", write("a.json", `{"changes":[{"change_id":"a","p_succ":0.5}],"conflicts":[{"ahead_change_id":"a","behind_change_id":"b"}],"capacity":1}`)}, scoring.ErrInvalidQueue},
		{"zero capacity", []string{"speculate", "--in", write("b.json", `{"changes":[{"change_id":"a","p_succ":0.5}]}`)}, scoring.ErrInvalidConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := runCmd(t, tc.args...); !errors.Is(err, tc.wantErr) {
				t.Errorf("speculate = %v, want %v", err, tc.wantErr)
			}
		})
	}
	if _, _, err := runCmd(t, "speculate", "--in", write("c.json", `{"changes": 3}`)); err == nil {
		t.Error("speculate accepted malformed JSON")
	}
}

// TestSpeculateStdin is issue 15 item 14: --in - reads the request from standard input
// and answers as for the file.
func TestSpeculateStdin(t *testing.T) {
	path := filepath.Join("testdata", "speculate_request.json")
	want, _, err := runCmd(t, "speculate", "--in", path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	e := &env{stdin: f, stdout: &out, stderr: io.Discard, log: slog.New(slog.DiscardHandler)}
	if err := runMain(context.Background(), e, []string{"speculate", "--in", "-"}); err != nil {
		t.Fatalf("speculate --in -: %v", err)
	}
	if out.String() != want {
		t.Errorf("speculate --in - printed\n%s\nwant\n%s", out.String(), want)
	}
}
