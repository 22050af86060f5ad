package pgwire

import (
	"bytes"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// TestAppendDataRow: the DataRow written straight from the columns is the
// message pgproto3 encodes from the same values, for every type, null
// and format.
func TestAppendDataRow(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	rec := typesRecord(mem)
	defer rec.Release()
	for _, format := range []int16{formatText, formatBinary} {
		enc, err := newRowEncoder(rec.Schema(), []int16{format}, &encodeOpts{zone: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		enc.load(rec)
		for i := 0; i < int(rec.NumRows()); i++ {
			want, err := (&pgproto3.DataRow{Values: enc.row(i)}).Encode(nil)
			if err != nil {
				t.Fatal(err)
			}
			got := enc.appendDataRow([]byte("prefix"), i)
			if !bytes.Equal(got[len("prefix"):], want) || string(got[:6]) != "prefix" {
				t.Fatalf("format %d row %d:\n got %x\nwant %x", format, i, got, want)
			}
		}
	}
}

// BenchmarkDataRow compares writing rows straight from the columns with
// pgproto3's DataRow encoding of the same values (the benchmark rows:
// bigint, double, text, timestamptz in binary).
func BenchmarkDataRow(b *testing.B) {
	mem := poisonmem.New()
	recs := benchRecords(mem, 64<<10)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	rec := recs[0]
	enc, err := newRowEncoder(rec.Schema(), []int16{formatBinary}, &encodeOpts{zone: time.UTC})
	if err != nil {
		b.Fatal(err)
	}
	enc.load(rec)
	n := int(rec.NumRows())
	buf := make([]byte, 0, 64<<10)
	b.Run("append", func(b *testing.B) {
		for k := 0; k < b.N; k++ {
			buf = enc.appendDataRow(buf[:0], k%n)
		}
	})
	b.Run("pgproto3", func(b *testing.B) {
		var dr pgproto3.DataRow
		for k := 0; k < b.N; k++ {
			dr.Values = enc.row(k % n)
			buf, _ = dr.Encode(buf[:0])
		}
	})
}
