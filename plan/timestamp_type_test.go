package plan_test

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// TestNullParamTimestampUnderNTZ: a NULL bound for a TIMESTAMP parameter
// stays a TIMESTAMP when the session's timestamp type is TIMESTAMP_NTZ
// (the rewrite of TIMESTAMP to TIMESTAMP_NTZ is for the text's own types),
// and a TIMESTAMP_NTZ one stays TIMESTAMP_NTZ.
func TestNullParamTimestampUnderNTZ(t *testing.T) {
	session := plan.DefaultOptions()
	session.TimestampNTZ = true
	for _, dt := range []arrow.DataType{vector.Timestamp, vector.TimestampNTZ} {
		e, err := plan.NullParam(dt, sql.Pos{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := sql.Parse("SELECT 1 AS v")
		if err != nil {
			t.Fatal(err)
		}
		st.(*sql.Query).Body.(*sql.Select).Items[0].Expr = e
		ps, err := plan.AnalyzeContext(context.Background(), st, plan.NewMemoryCatalog(), plan.AnalyzeOptions{Session: &session})
		if err != nil {
			t.Fatal(err)
		}
		got := ps.(*plan.QueryStatement).Plan.Schema().Field(0).Type
		if !arrow.TypeEqual(got, dt) {
			t.Errorf("NULL parameter of %s under TIMESTAMP_NTZ has type %s", dt, got)
		}
	}
}
