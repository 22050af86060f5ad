package nexmark

import "strconv"

// q0: pass-through. q1: currency conversion. q2: selection. q13: join
// with a bounded side input. All stateless: every epoch's rows are final.

type bidRow struct {
	auction, bidder, price, ts int64
	extra                      string
}

type q0Peer struct{ out []bidRow }

func (p *q0Peer) epoch(b *Batch) {
	a, bd, pr, ts, ex := ints(b.Bid, bAuction), ints(b.Bid, bBidder), ints(b.Bid, bPrice), times(b.Bid, bTime), strs(b.Bid, bExtra)
	for i := range a {
		p.out = append(p.out, bidRow{a[i], bd[i], pr[i], int64(ts[i]), ex.Value(i)})
	}
}

func (p *q0Peer) answer() []string {
	rows := make([]string, len(p.out))
	for i, r := range p.out {
		rows[i] = row(fmtInt(r.auction), fmtInt(r.bidder), fmtInt(r.price), fmtInt(r.ts), r.extra)
	}
	return sorted(rows)
}

// q1Peer converts prices to euros: 0.908 * price as a decimal with three
// digits after the point, kept as its unscaled value (price * 908).
type q1Peer struct{ q0Peer }

func (p *q1Peer) epoch(b *Batch) {
	start := len(p.out)
	p.q0Peer.epoch(b)
	for i := start; i < len(p.out); i++ {
		p.out[i].price *= 908
	}
}

func (p *q1Peer) answer() []string {
	rows := make([]string, len(p.out))
	for i, r := range p.out {
		rows[i] = row(fmtInt(r.auction), fmtInt(r.bidder), fmtDecimal(r.price, 3), fmtInt(r.ts), r.extra)
	}
	return sorted(rows)
}

type q2Peer struct{ out [][2]int64 }

func (p *q2Peer) epoch(b *Batch) {
	a, pr := ints(b.Bid, bAuction), ints(b.Bid, bPrice)
	for i, x := range a {
		if x%123 == 0 {
			p.out = append(p.out, [2]int64{x, pr[i]})
		}
	}
}

func (p *q2Peer) answer() []string {
	rows := make([]string, len(p.out))
	for i, r := range p.out {
		rows[i] = row(fmtInt(r[0]), fmtInt(r[1]))
	}
	return sorted(rows)
}

// sideInputKeys is the size of q13's side input: keys 0..9999, each with
// its decimal string as value.
const sideInputKeys = 10_000

func sideInputValue(k int64) string { return strconv.FormatInt(k, 10) }

type q13Peer struct {
	values []string
	out    []bidRow // extra holds the side input's value
}

func (p *q13Peer) epoch(b *Batch) {
	if p.values == nil {
		p.values = make([]string, sideInputKeys)
		for k := range p.values {
			p.values[k] = sideInputValue(int64(k))
		}
	}
	a, bd, pr, ts := ints(b.Bid, bAuction), ints(b.Bid, bBidder), ints(b.Bid, bPrice), times(b.Bid, bTime)
	for i := range a {
		// Auction ids are positive: the key is always in the table.
		if k := a[i] % sideInputKeys; k >= 0 {
			p.out = append(p.out, bidRow{a[i], bd[i], pr[i], int64(ts[i]), p.values[k]})
		}
	}
}

// answer formats the rows as q0's: auction, bidder, price, dateTime and
// (in the extra field) the side input's value.
func (p *q13Peer) answer() []string { return (&q0Peer{out: p.out}).answer() }

// q17: auction statistics per day, a running aggregation whose latest
// values per (auction, day) are the answer.
type q17Peer struct{ groups map[[2]int64]*q17Stats }

type q17Stats struct{ n, rank1, rank2, rank3, min, max, sum int64 }

const day = 24 * 3600 * second

func newQ17Peer() *q17Peer { return &q17Peer{groups: map[[2]int64]*q17Stats{}} }

func (p *q17Peer) epoch(b *Batch) {
	ids, prices, ts := ints(b.Bid, bAuction), ints(b.Bid, bPrice), times(b.Bid, bTime)
	for i, id := range ids {
		k := [2]int64{id, floorDiv(int64(ts[i]), day) * day}
		g := p.groups[k]
		pr := prices[i]
		if g == nil {
			g = &q17Stats{min: pr, max: pr}
			p.groups[k] = g
		}
		g.n++
		switch {
		case pr < 10_000:
			g.rank1++
		case pr < 1_000_000:
			g.rank2++
		default:
			g.rank3++
		}
		g.min, g.max, g.sum = min(g.min, pr), max(g.max, pr), g.sum+pr
	}
}

func (p *q17Peer) answer() []string {
	rows := make([]string, 0, len(p.groups))
	for k, g := range p.groups {
		rows = append(rows, row(fmtInt(k[0]), fmtInt(k[1]), fmtInt(g.n), fmtInt(g.rank1), fmtInt(g.rank2), fmtInt(g.rank3),
			fmtInt(g.min), fmtInt(g.max), fmtFloat(float64(g.sum)/float64(g.n)), fmtInt(g.sum)))
	}
	return sorted(rows)
}
