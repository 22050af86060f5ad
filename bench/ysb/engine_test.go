package ysb

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

func TestEngineAnswer(t *testing.T) {
	for _, enc := range []Encoding{Plain, Dict} {
		t.Run(enc.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			d := Generate(40_000, 1000, 7)
			camp := d.CampaignRecord(mem, enc)
			defer camp.Release()
			var epochs [][]arrow.Record
			for lo := 0; lo < d.Len(); lo += 10_000 {
				epochs = append(epochs, d.Records(mem, enc, lo, lo+10_000, 4096))
			}
			defer releaseEpochs(epochs)
			res, err := RunEngine(context.Background(), EngineOptions{Mem: mem, CheckpointRoot: t.TempDir()}, camp, epochs)
			if err != nil {
				t.Fatal(err)
			}
			if diff := Diff(res.Answer, d.Reference(0, d.Len())); diff != "" {
				t.Fatal(diff)
			}
		})
	}
}
