package nexmark

// The windowed queries run in Append mode: a window is in the answer once
// the watermark (the largest event time seen, minus the query's delay of 0)
// has reached its end. Windows start at multiples of their slide from the
// Unix epoch, as Spark's window().

// floorDiv is the floor of a / b for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// q5: hot items: per sliding window (10 s, every 2 s) the auctions with
// the most bids.
type q5Peer struct {
	counts map[int64]map[int64]int64 // window start → auction → bids
	maxTs  int64
}

func newQ5Peer() *q5Peer { return &q5Peer{counts: map[int64]map[int64]int64{}, maxTs: noTime} }

const q5Slide = 2 * second

func (p *q5Peer) epoch(b *Batch) {
	ids, ts := ints(b.Bid, bAuction), times(b.Bid, bTime)
	for i, id := range ids {
		t := int64(ts[i])
		for s := floorDiv(t, q5Slide) * q5Slide; s > t-tenSecond; s -= q5Slide {
			m := p.counts[s]
			if m == nil {
				m = map[int64]int64{}
				p.counts[s] = m
			}
			m[id]++
		}
	}
	p.maxTs = maxTime(p.maxTs, ts)
}

func (p *q5Peer) answer() []string {
	var rows []string
	for s, m := range p.counts {
		if s+tenSecond > p.maxTs {
			continue
		}
		top := int64(0)
		for _, n := range m {
			top = max(top, n)
		}
		for a, n := range m {
			if n >= top {
				rows = append(rows, row(fmtInt(a), fmtInt(n)))
			}
		}
	}
	return sorted(rows)
}

// q7: highest bid: per tumbling 10-second window its maximum price, and
// the bids at that price from the window's rowtime (end - 1 ms) back by
// 10 seconds, i.e. the window itself plus its predecessor's last
// millisecond.
type q7Peer struct {
	wins  map[int64]*q7Window // window start →
	maxTs int64
}

type q7Window struct {
	max  int64
	top  []bidRow // bids at the running maximum
	last []bidRow // bids in the window's last millisecond
}

func newQ7Peer() *q7Peer { return &q7Peer{wins: map[int64]*q7Window{}, maxTs: noTime} }

func (p *q7Peer) epoch(b *Batch) {
	a, bd, pr, ts, ex := ints(b.Bid, bAuction), ints(b.Bid, bBidder), ints(b.Bid, bPrice), times(b.Bid, bTime), strs(b.Bid, bExtra)
	for i := range a {
		t := int64(ts[i])
		s := floorDiv(t, tenSecond) * tenSecond
		w := p.wins[s]
		if w == nil {
			w = &q7Window{max: -1}
			p.wins[s] = w
		}
		r := bidRow{a[i], bd[i], pr[i], t, ex.Value(i)}
		switch {
		case pr[i] > w.max:
			w.max = pr[i]
			w.top = append(w.top[:0], r)
		case pr[i] == w.max:
			w.top = append(w.top, r)
		}
		if t >= s+tenSecond-1000 {
			w.last = append(w.last, r)
		}
	}
	p.maxTs = maxTime(p.maxTs, ts)
}

func (p *q7Peer) answer() []string {
	var rows []string
	emit := func(r bidRow) {
		rows = append(rows, row(fmtInt(r.auction), fmtInt(r.price), fmtInt(r.bidder), fmtInt(r.ts), r.extra))
	}
	for s, w := range p.wins {
		if s+tenSecond > p.maxTs {
			continue
		}
		for _, r := range w.top {
			// The window's rowtime is its end - 1 ms: a bid in the last
			// millisecond past it does not count (ms-granular times: none).
			if r.ts <= s+tenSecond-1000 {
				emit(r)
			}
		}
		if prev := p.wins[s-tenSecond]; prev != nil {
			for _, r := range prev.last {
				if r.price == w.max && r.ts == s-1000 {
					emit(r)
				}
			}
		}
	}
	return sorted(rows)
}

// q8: monitor new users: people who opened an auction in the tumbling
// 10-second window in which they registered.
type q8Peer struct {
	persons map[[2]int64]string // (window start, id) → name
	sellers map[[2]int64]bool   // (window start, seller)
	maxP    int64
	maxA    int64
}

func newQ8Peer() *q8Peer {
	return &q8Peer{persons: map[[2]int64]string{}, sellers: map[[2]int64]bool{}, maxP: noTime, maxA: noTime}
}

func (p *q8Peer) epoch(b *Batch) {
	ids, names, pts := ints(b.Person, pID), strs(b.Person, pName), times(b.Person, pTime)
	for i, id := range ids {
		p.persons[[2]int64{floorDiv(int64(pts[i]), tenSecond) * tenSecond, id}] = names.Value(i)
	}
	sellers, ats := ints(b.Auction, aSeller), times(b.Auction, aTime)
	for i, s := range sellers {
		p.sellers[[2]int64{floorDiv(int64(ats[i]), tenSecond) * tenSecond, s}] = true
	}
	p.maxP, p.maxA = maxTime(p.maxP, pts), maxTime(p.maxA, ats)
}

func (p *q8Peer) answer() []string {
	w := min(p.maxP, p.maxA)
	var rows []string
	for k, name := range p.persons {
		if k[0]+tenSecond <= w && p.sellers[k] {
			rows = append(rows, row(fmtInt(k[1]), name, fmtInt(k[0])))
		}
	}
	return sorted(rows)
}

// q11: user sessions: bids per bidder per session (a gap of 10 seconds
// ends one).
type q11Peer struct {
	open   map[int64]*q11Session
	closed []q11Row
	maxTs  int64
}

type q11Session struct{ start, last, n int64 }

type q11Row struct{ bidder, n, start, end int64 }

func newQ11Peer() *q11Peer { return &q11Peer{open: map[int64]*q11Session{}, maxTs: noTime} }

func (p *q11Peer) epoch(b *Batch) {
	bidders, ts := ints(b.Bid, bBidder), times(b.Bid, bTime)
	for i, id := range bidders {
		t := int64(ts[i])
		s := p.open[id]
		switch {
		case s == nil:
			p.open[id] = &q11Session{t, t, 1}
		case t >= s.last+tenSecond: // in-order input: the session is over
			p.closed = append(p.closed, q11Row{id, s.n, s.start, s.last + tenSecond})
			*s = q11Session{t, t, 1}
		default:
			s.last = max(s.last, t)
			s.n++
		}
	}
	p.maxTs = maxTime(p.maxTs, ts)
}

func (p *q11Peer) answer() []string {
	var rows []string
	add := func(r q11Row) {
		if r.end <= p.maxTs {
			rows = append(rows, row(fmtInt(r.bidder), fmtInt(r.n), fmtInt(r.start), fmtInt(r.end)))
		}
	}
	for _, r := range p.closed {
		add(r)
	}
	for id, s := range p.open {
		add(q11Row{id, s.n, s.start, s.last + tenSecond})
	}
	return sorted(rows)
}
