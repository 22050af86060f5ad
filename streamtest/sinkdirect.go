package streamtest

import (
	"context"
	"errors"
	"fmt"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/vector"
)

// ClearSink empties the memory sink; afterwards any epoch id is accepted
// again, and the next CheckNewAnswer starts from scratch.
func ClearSink() Action {
	return newAction("ClearSink", func(s *Stream) error {
		t := s.Sink()
		if t == nil {
			return errors.New("no sink yet")
		}
		s.lastChecked = -1
		return t.Clear()
	})
}

// SinkWrite commits rows as epoch directly to the memory sink of a
// fixture without a query (Spark's MemorySink.write). truncate (Complete
// mode) must match Options.SinkMode.
func SinkWrite(epoch int64, truncate bool, rows ...Row) Action {
	return newAction(fmt.Sprintf("SinkWrite(epoch %d, truncate %v, %s)", epoch, truncate, describeRows(rows)), func(s *Stream) error {
		if s.direct == nil {
			return errors.New("the fixture has no direct sink (set Options.SinkSchema without a Query)")
		}
		if truncate != (s.opts.SinkMode == arrowstream.Complete) {
			return fmt.Errorf("truncate %v does not match the sink's %s mode", truncate, s.opts.SinkMode)
		}
		rec, err := buildRecord(s.mem, s.opts.SinkSchema, rows)
		if err != nil {
			return err
		}
		scan, err := vector.NewScan(rec.Schema(), rec)
		rec.Release()
		if err != nil {
			return err
		}
		return s.direct.AddBatch(context.Background(), epoch, scan)
	})
}

// SinkExpectation is what SinkAssert compares; fields not flagged are not
// compared.
type SinkExpectation struct {
	// LatestEpoch (when CheckLatestEpoch): -1 means no epoch committed.
	LatestEpoch      int64
	CheckLatestEpoch bool
	// LatestBatch and AllData compare as multisets when flagged.
	LatestBatch      []Row
	CheckLatestBatch bool
	AllData          []Row
	CheckAllData     bool
}

// SinkAssert checks the memory sink's latest epoch, latest batch and all
// data (Spark's MemorySink.latestBatchId, latestBatchData, allData).
func SinkAssert(want SinkExpectation) Action {
	desc := "SinkAssert("
	if want.CheckLatestEpoch {
		desc += fmt.Sprintf("latest epoch %d ", want.LatestEpoch)
	}
	if want.CheckLatestBatch {
		desc += "latest batch " + describeRows(want.LatestBatch) + " "
	}
	if want.CheckAllData {
		desc += "all data " + describeRows(want.AllData)
	}
	return newAction(desc+")", func(s *Stream) error {
		t := s.Sink()
		if t == nil {
			return errors.New("no sink yet")
		}
		if want.CheckLatestEpoch {
			if got := t.LatestEpoch(); got != want.LatestEpoch {
				return fmt.Errorf("latest epoch is %d, want %d", got, want.LatestEpoch)
			}
		}
		if want.CheckLatestBatch {
			got := snapshotRows(t.LatestBatchData())
			if diff := compareRows(want.LatestBatch, got, false); diff != "" {
				return fmt.Errorf("latest batch: %s\n  want:\n%s  got:\n%s", diff, FormatRows(want.LatestBatch), FormatRows(got))
			}
		}
		if want.CheckAllData {
			got := snapshotRows(t.AllData())
			if diff := compareRows(want.AllData, got, false); diff != "" {
				return fmt.Errorf("all data: %s\n  want:\n%s  got:\n%s", diff, FormatRows(want.AllData), FormatRows(got))
			}
		}
		return nil
	})
}
