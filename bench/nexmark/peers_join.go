package nexmark

import "github.com/apache/arrow/go/v17/arrow"

// q3: local item suggestion (auction ⋈ person, no time bound: both sides
// are kept for ever). q4: average closing price per category. q20:
// bids expanded with their auction (category 10).

type q3Person struct{ name, city, state string }

type q3Peer struct {
	persons  map[int64]q3Person
	bySeller map[int64][]int64 // category-10 auctions by seller
	out      []string          // formatted in answer: name|city|state|id
	pairs    []q3Pair
}

type q3Pair struct {
	person q3Person
	id     int64
}

func newQ3Peer() *q3Peer {
	return &q3Peer{persons: map[int64]q3Person{}, bySeller: map[int64][]int64{}}
}

func (p *q3Peer) epoch(b *Batch) {
	ids, names, cities, states := ints(b.Person, pID), strs(b.Person, pName), strs(b.Person, pCity), strs(b.Person, pState)
	for i, id := range ids {
		switch st := states.Value(i); st {
		case "OR", "ID", "CA":
			per := q3Person{names.Value(i), cities.Value(i), st}
			p.persons[id] = per
			for _, a := range p.bySeller[id] {
				p.pairs = append(p.pairs, q3Pair{per, a})
			}
		}
	}
	aids, sellers, cats := ints(b.Auction, aID), ints(b.Auction, aSeller), ints(b.Auction, aCategory)
	for i, id := range aids {
		if cats[i] != 10 {
			continue
		}
		s := sellers[i]
		if per, ok := p.persons[s]; ok {
			p.pairs = append(p.pairs, q3Pair{per, id})
		}
		p.bySeller[s] = append(p.bySeller[s], id)
	}
}

func (p *q3Peer) answer() []string {
	rows := make([]string, len(p.pairs))
	for i, x := range p.pairs {
		rows[i] = row(x.person.name, x.person.city, x.person.state, fmtInt(x.id))
	}
	return sorted(rows)
}

// q4Delay is the delay of the watermark on auction.expires in q4.
const q4Delay = second

// closingAuction is an auction's closing price so far: the highest bid
// within its lifetime. group is the column the query groups closed
// auctions by (category in q4, seller in q6).
type closingAuction struct {
	group, ts, expires, final int64
	matched                   bool
}

type q4Bid struct{ ts, price int64 }

// closingPrices is the peer of q4's and q6's inner query: the closing
// price of every auction, grouped by one of the auction's columns.
type closingPrices struct {
	groupCol int // the auction column closingAuction.group holds
	auctions map[int64]*closingAuction
	// pending holds bids on auctions not seen yet (the generator lets bids
	// name a few auctions ahead).
	pending              map[int64][]q4Bid
	maxExpires, maxBidTs int64
}

func newClosingPrices(groupCol int) closingPrices {
	return closingPrices{groupCol: groupCol, auctions: map[int64]*closingAuction{}, pending: map[int64][]q4Bid{}, maxExpires: noTime, maxBidTs: noTime}
}

func (a *closingAuction) bid(b q4Bid) {
	if b.ts >= a.ts && b.ts <= a.expires {
		if !a.matched || b.price > a.final {
			a.final = b.price
		}
		a.matched = true
	}
}

func (p *closingPrices) epoch(b *Batch) {
	ids, groups, ts, exp := ints(b.Auction, aID), ints(b.Auction, p.groupCol), times(b.Auction, aTime), times(b.Auction, aExpires)
	for i, id := range ids {
		a := &closingAuction{group: groups[i], ts: int64(ts[i]), expires: int64(exp[i])}
		p.auctions[id] = a
		for _, x := range p.pending[id] {
			a.bid(x)
		}
		delete(p.pending, id)
	}
	p.maxExpires = maxTime(p.maxExpires, exp)
	bids, bts, prices := ints(b.Bid, bAuction), times(b.Bid, bTime), ints(b.Bid, bPrice)
	for i, id := range bids {
		x := q4Bid{int64(bts[i]), prices[i]}
		if a, ok := p.auctions[id]; ok {
			a.bid(x)
		} else {
			p.pending[id] = append(p.pending[id], x)
		}
	}
	p.maxBidTs = maxTime(p.maxBidTs, bts)
}

// watermark is the final watermark the aggregation over the join sees:
// the auctions closed by it are the query's answer. That is the global
// watermark less joinLag: the join passes on the least of its sides' state
// watermarks (Spark's watermark propagation, docs/semantics.md §3.3), and
// the auction side's is the bids' watermark less a millisecond, since
// `B.dateTime <= A.expires` is not strict (StreamingJoinHelper's "- 1").
func (p *closingPrices) watermark() int64 {
	return min(p.maxExpires-q4Delay, p.maxBidTs) - joinLag
}

// joinLag is how far the output watermark of q4's and q6's join trails
// its input watermark (µs).
const joinLag = 1000

type q4Peer struct{ closingPrices }

func newQ4Peer() *q4Peer { return &q4Peer{newClosingPrices(aCategory)} }

// answer is the outer aggregation: avg(final) per category over the
// auctions closed by the final watermark.
func (p *q4Peer) answer() []string {
	w := p.watermark()
	sum, n := map[int64]float64{}, map[int64]int64{}
	for _, a := range p.auctions {
		if a.matched && a.expires <= w {
			sum[a.group] += float64(a.final)
			n[a.group]++
		}
	}
	var rows []string
	for c, s := range sum {
		rows = append(rows, row(fmtInt(c), fmtFloat(s/float64(n[c]))))
	}
	return sorted(rows)
}

// q20Peer keeps the category-10 auctions and the bids on auctions not seen
// yet; it records output pairs as (batch, row) references.
type q20Peer struct {
	batches  []*Batch
	auctions map[int64]ref // category-10 auctions
	seen     map[int64]bool
	pending  map[int64][]ref
	pairs    [][2]ref // bid, auction
}

type ref struct{ batch, row int32 }

func newQ20Peer() *q20Peer {
	return &q20Peer{auctions: map[int64]ref{}, seen: map[int64]bool{}, pending: map[int64][]ref{}}
}

func (p *q20Peer) epoch(b *Batch) {
	bi := int32(len(p.batches))
	p.batches = append(p.batches, b)
	ids, cats := ints(b.Auction, aID), ints(b.Auction, aCategory)
	for i, id := range ids {
		p.seen[id] = true
		if cats[i] != 10 {
			delete(p.pending, id)
			continue
		}
		r := ref{bi, int32(i)}
		p.auctions[id] = r
		for _, x := range p.pending[id] {
			p.pairs = append(p.pairs, [2]ref{x, r})
		}
		delete(p.pending, id)
	}
	for i, id := range ints(b.Bid, bAuction) {
		r := ref{bi, int32(i)}
		if a, ok := p.auctions[id]; ok {
			p.pairs = append(p.pairs, [2]ref{r, a})
		} else if !p.seen[id] {
			p.pending[id] = append(p.pending[id], r)
		}
	}
}

func (p *q20Peer) answer() []string {
	rows := make([]string, len(p.pairs))
	for i, x := range p.pairs {
		bid, auc := p.batches[x[0].batch].Bid, p.batches[x[1].batch].Auction
		bj, aj := int(x[0].row), int(x[1].row)
		rows[i] = row(fmtInt(ints(bid, bAuction)[bj]), fmtInt(ints(bid, bBidder)[bj]), fmtInt(ints(bid, bPrice)[bj]),
			strs(bid, bChannel).Value(bj), strs(bid, bURL).Value(bj), fmtTS(times(bid, bTime)[bj]), strs(bid, bExtra).Value(bj),
			strs(auc, aItemName).Value(aj), strs(auc, aDescription).Value(aj), fmtInt(ints(auc, aInitialBid)[aj]),
			fmtInt(ints(auc, aReserve)[aj]), fmtTS(times(auc, aTime)[aj]), fmtTS(times(auc, aExpires)[aj]),
			fmtInt(ints(auc, aSeller)[aj]), fmtInt(ints(auc, aCategory)[aj]), strs(auc, aExtra).Value(aj))
	}
	return sorted(rows)
}

func fmtTS(t arrow.Timestamp) string { return fmtInt(int64(t)) }
