package nexmark

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// generate returns the events 0..n-1 in batches of size.
func generate(t testing.TB, mem memory.Allocator, cfg Config, n, size int) []Batch {
	t.Helper()
	g, err := NewGenerator(mem, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out []Batch
	for g.Generated() < int64(n) {
		b, err := g.Next(min(size, n-int(g.Generated())))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func releaseBatches(bs []Batch) {
	for i := range bs {
		bs[i].Release()
	}
}

func int64s(rec arrow.Record, name string) []int64 {
	idx := rec.Schema().FieldIndices(name)[0]
	switch a := rec.Column(idx).(type) {
	case *array.Int64:
		return a.Int64Values()
	case *array.Timestamp:
		v := a.TimestampValues()
		out := make([]int64, len(v))
		for i, x := range v {
			out[i] = int64(x)
		}
		return out
	}
	panic("not an integer column: " + name)
}

func TestGeneratorProportionsAndIDs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 100_000
	bs := generate(t, mem, Config{Seed: 7}, n, 3001)
	defer releaseBatches(bs)

	var persons, auctions, bids int64
	maxPerson, maxAuction := int64(FirstPersonID-1), int64(FirstAuctionID-1)
	hotAuctionBids := 0
	lastTS := int64(0)
	for _, b := range bs {
		persons += b.Person.NumRows()
		auctions += b.Auction.NumRows()
		bids += b.Bid.NumRows()
		// Ids are consecutive across batches: each type's next id is the
		// previous maximum plus one.
		for _, id := range int64s(b.Person, "id") {
			if id != maxPerson+1 {
				t.Fatalf("person id %d after %d", id, maxPerson)
			}
			maxPerson = id
		}
		// Within a batch events interleave, so check references against
		// the ids known at the end of the batch plus the reference
		// generator's lead of yet-to-be-created ids.
		for i, id := range int64s(b.Auction, "id") {
			if id != maxAuction+1 {
				t.Fatalf("auction id %d after %d", id, maxAuction)
			}
			maxAuction = id
			seller := int64s(b.Auction, "seller")[i]
			if seller < FirstPersonID || seller > maxPerson+personIDLead {
				t.Fatalf("auction %d: seller %d outside [%d, %d]", id, seller, FirstPersonID, maxPerson+personIDLead)
			}
			if c := int64s(b.Auction, "category")[i]; c < FirstCategoryID || c >= FirstCategoryID+NumCategories {
				t.Fatalf("auction %d: category %d", id, c)
			}
			if exp, ts := int64s(b.Auction, "expires")[i], int64s(b.Auction, "dateTime")[i]; exp <= ts {
				t.Fatalf("auction %d expires %d before its time %d", id, exp, ts)
			}
		}
		bidAuctions, bidders, prices := int64s(b.Bid, "auction"), int64s(b.Bid, "bidder"), int64s(b.Bid, "price")
		for i := range bidAuctions {
			if a := bidAuctions[i]; a < FirstAuctionID || a > maxAuction+auctionIDLead {
				t.Fatalf("bid on auction %d outside [%d, %d]", a, FirstAuctionID, maxAuction+auctionIDLead)
			} else if a <= maxAuction && (a-FirstAuctionID)%hotAuctionGroup == 0 {
				hotAuctionBids++
			}
			if p := bidders[i]; p < FirstPersonID || p > maxPerson+personIDLead {
				t.Fatalf("bidder %d outside [%d, %d]", p, FirstPersonID, maxPerson+personIDLead)
			}
			if p := prices[i]; p < 100 || p > 100_000_000 {
				t.Fatalf("price %d outside [100, 1e8]", p)
			}
		}
		for _, ts := range int64s(b.Bid, "dateTime") {
			if ts < lastTS {
				t.Fatalf("bid time %d before %d (in-order config)", ts, lastTS)
			}
			lastTS = ts
		}
	}
	if persons != n/50 || auctions != 3*n/50 || bids != 46*n/50 {
		t.Fatalf("persons/auctions/bids = %d/%d/%d, want 1:3:46 of %d", persons, auctions, bids, n)
	}
	// Half of the bids (HotAuctionRatio 2) go to hot auctions, plus the
	// random picks that happen to be one.
	if frac := float64(hotAuctionBids) / float64(bids); frac < 0.45 || frac > 0.6 {
		t.Fatalf("%.3f of bids on hot auctions, want about 0.5", frac)
	}
	// 10000 events/s: 100 000 events span 10 s of event time.
	if span := lastTS - int64s(bs[0].Bid, "dateTime")[0]; span < 9_900_000 || span > 10_000_000 {
		t.Fatalf("event time span %d µs, want about 10 s", span)
	}
}

// fingerprint hashes every value of the batches, in order.
func fingerprint(bs []Batch) string {
	h := fnv.New64a()
	var buf [8]byte
	for _, b := range bs {
		for _, rec := range []arrow.Record{b.Person, b.Auction, b.Bid} {
			for c := range int(rec.NumCols()) {
				switch a := rec.Column(c).(type) {
				case *array.String:
					for i := range a.Len() {
						h.Write([]byte(a.Value(i)))
						h.Write([]byte{0})
					}
				default:
					for _, v := range int64s(rec, rec.Schema().Field(c).Name) {
						binary.LittleEndian.PutUint64(buf[:], uint64(v))
						h.Write(buf[:])
					}
				}
			}
		}
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

func TestGeneratorDeterministic(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	// The batch size does not change the events.
	a := generate(t, mem, Config{Seed: 1}, 20_000, 20_000)
	defer releaseBatches(a)
	b := generate(t, mem, Config{Seed: 1}, 20_000, 777)
	defer releaseBatches(b)
	c := generate(t, mem, Config{Seed: 2}, 20_000, 20_000)
	defer releaseBatches(c)
	one, other := fingerprint(a), fingerprint(b[:1])
	if one == other {
		t.Fatal("a prefix has the fingerprint of the whole")
	}
	// Compare record contents whatever the batching.
	concat := func(bs []Batch, pick func(Batch) arrow.Record) string {
		var sb strings.Builder
		for _, x := range bs {
			r := pick(x)
			for i := range int(r.NumRows()) {
				for c := range int(r.NumCols()) {
					sb.WriteString(r.Column(c).ValueStr(i))
					sb.WriteByte('|')
				}
			}
		}
		return sb.String()
	}
	for _, pick := range []func(Batch) arrow.Record{
		func(b Batch) arrow.Record { return b.Person }, func(b Batch) arrow.Record { return b.Auction },
		func(b Batch) arrow.Record { return b.Bid },
	} {
		if concat(a, pick) != concat(b, pick) {
			t.Fatal("batch size changed the events")
		}
	}
	if fingerprint(a) == fingerprint(c) {
		t.Fatal("seeds 1 and 2 gave the same events")
	}
}

// TestGeneratorGolden pins the generated data: a change of the generator
// (or of what it draws in which order) shows here, and should be a
// conscious one (figures of different versions are about different data).
func TestGeneratorGolden(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	bs := generate(t, mem, Config{Seed: 42}, 5000, 1000)
	defer releaseBatches(bs)
	const want = "28ab786e376494fc"
	if got := fingerprint(bs); got != want {
		t.Fatalf("fingerprint %s, want %s", got, want)
	}
	first := bs[0]
	if got := first.Person.Column(1).(*array.String).Value(0); !strings.Contains(got, " ") {
		t.Fatalf("person name %q is not a first and last name", got)
	}
}

func TestGeneratorRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{{EventRate: -1}, {HotAuctionRatio: -2}, {AvgBidByteSize: -1}, {EventRate: 2_000_000_000}} {
		if _, err := NewGenerator(memory.NewGoAllocator(), cfg); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
	g, err := NewGenerator(memory.NewGoAllocator(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Next(0); err == nil {
		t.Error("a batch of 0 events accepted")
	}
}

func BenchmarkGenerator(b *testing.B) {
	g, err := NewGenerator(memory.NewGoAllocator(), Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	const n = 10_000
	b.ReportAllocs()
	for b.Loop() {
		batch, err := g.Next(n)
		if err != nil {
			b.Fatal(err)
		}
		batch.Release()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
