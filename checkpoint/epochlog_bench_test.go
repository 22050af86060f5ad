package checkpoint

import (
	"fmt"
	"testing"
)

// BenchmarkEpochLogEpoch measures what the offset and commit logs cost per
// epoch, durably (fsync) and not: "v1" writes offsets/<N> and commits/<N>
// (temp file, fsync, link, directory fsync each), "v2" appends the commit
// of N-1 with the offsets of N to the epoch log (one write, one
// fdatasync). ns/op is per epoch, retention included.
func BenchmarkEpochLogEpoch(b *testing.B) {
	for _, format := range []int{1, 2} {
		for _, noSync := range []bool{false, true} {
			name := fmt.Sprintf("format=v%d/checkpoint=fsync", format)
			if noSync {
				name = fmt.Sprintf("format=v%d/checkpoint=nosync", format)
			}
			b.Run(name, func(b *testing.B) {
				o, c, err := OpenEpochLogs(b.TempDir(), &Writer{NoSync: noSync, LogFormat: format})
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				seq := seqOf(0)
				var n int64
				for b.Loop() {
					if _, err := o.Add(n, seq); err != nil {
						b.Fatal(err)
					}
					if _, err := c.AddWithNext(n, CommitMetadata{}); err != nil {
						b.Fatal(err)
					}
					if n > 100 {
						if err := o.Purge(n - 100); err != nil {
							b.Fatal(err)
						}
						if err := c.Purge(n - 100); err != nil {
							b.Fatal(err)
						}
					}
					n++
				}
			})
		}
	}
}
