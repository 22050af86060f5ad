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
		if k := a[i] % sideInputKeys; k >= 0 {
			p.out = append(p.out, bidRow{a[i], bd[i], pr[i], int64(ts[i]), p.values[k]})
		}
	}
}

func (p *q13Peer) answer() []string { return p.q0Peer().answer() }

func (p *q13Peer) q0Peer() *q0Peer { return &q0Peer{out: p.out} }
