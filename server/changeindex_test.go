package server

import (
	"fmt"
	"slices"
	"testing"

	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
)

// TestChangeIndex: the scan of a small request and the map of a large one find the
// same first change of each id and report the same duplicates and unknown ids, named
// by field.
func TestChangeIndex(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 3, smallIndex, smallIndex + 1, 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			// Changes c0..c(n-1), then c0 again (a duplicate of changes[0]) and one
			// without an id (invalid, and never indexed).
			var list []*pb.Change
			for i := range n {
				list = append(list, &pb.Change{ChangeId: fmt.Sprint("c", i)})
			}
			list = append(list, &pb.Change{ChangeId: "c0"}, &pb.Change{})
			var v violations
			changes, x := changeSet(list, "r", "changes", &v)
			if (x.ids == nil) != (len(list) <= smallIndex) {
				t.Errorf("changeSet of %d changes: map %v, want one only above %d", len(list), x.ids != nil, smallIndex)
			}
			want := []Violation{
				{Field: fmt.Sprintf("changes[%d].change_id", n), Description: `duplicate id "c0", also changes[0]`},
				{Field: fmt.Sprintf("changes[%d].change_id", n+1), Description: "must not be empty"},
			}
			if !slices.EqualFunc(v.list, want, func(a, b Violation) bool { return a.Field == b.Field && a.Description == b.Description }) {
				t.Errorf("changeSet violations = %v, want %v", v.list, want)
			}
			for i := range n {
				id := fmt.Sprint("c", i)
				if j, ok := lookupIn(x, id, path{}, "change_id", &v); !ok || j != i || changes[j].ChangeID != id {
					t.Errorf("lookupIn(%q) = %d, %v, want %d, true", id, j, ok, i)
				}
			}
			v = violations{}
			for _, id := range []string{"nope", ""} {
				if j, ok := lookupIn(x, id, at("builds", 0, ""), "change_id", &v); ok {
					t.Errorf("lookupIn(%q) = %d, true, want not found", id, j)
				}
			}
			if len(v.list) != 2 || v.list[0].Field != "builds[0].change_id" || v.list[1].Field != "builds[0].change_id" {
				t.Errorf("lookupIn of an unknown and an empty id recorded %v, want two violations of builds[0].change_id", v.list)
			}
		})
	}
}
