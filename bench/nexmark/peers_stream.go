package nexmark

import (
	"strings"
	"time"
)

// Peers of queries_stream.go. Strings point into the batches (kept by
// reference: batch and row), which outlive answer.

// batchRefs keeps the batches a peer references rows of.
type batchRefs struct{ batches []*Batch }

func (r *batchRefs) add(b *Batch) int32 {
	r.batches = append(r.batches, b)
	return int32(len(r.batches) - 1)
}

// bidCols formats a referenced bid as auction, bidder, price, channel,
// url, dateTime, extra.
func (r *batchRefs) bidCols(x ref) []string {
	b := r.batches[x.batch].Bid
	i := int(x.row)
	return []string{fmtInt(ints(b, bAuction)[i]), fmtInt(ints(b, bBidder)[i]), fmtInt(ints(b, bPrice)[i]),
		strs(b, bChannel).Value(i), strs(b, bURL).Value(i), fmtInt(int64(times(b, bTime)[i])), strs(b, bExtra).Value(i)}
}

// q21: the channel id from the channel name or the url's channel_id
// parameter; rows with neither are dropped.
type q21Peer struct{ out []string }

// channelIDParam is regexp_extract(url, '(&|^)channel_id=([^&]*)', 2):
// the value of the first channel_id parameter at the start or after an
// '&', "" when there is none.
func channelIDParam(url string) string {
	const key = "channel_id="
	for from := 0; ; {
		j := strings.Index(url[from:], key)
		if j < 0 {
			return ""
		}
		pos := from + j
		if pos == 0 || url[pos-1] == '&' {
			rest := url[pos+len(key):]
			if k := strings.IndexByte(rest, '&'); k >= 0 {
				return rest[:k]
			}
			return rest
		}
		from = pos + 1
	}
}

func (p *q21Peer) epoch(b *Batch) {
	a, bd, pr, ch, url := ints(b.Bid, bAuction), ints(b.Bid, bBidder), ints(b.Bid, bPrice), strs(b.Bid, bChannel), strs(b.Bid, bURL)
	for i := range a {
		c := ch.Value(i)
		param := channelIDParam(url.Value(i))
		var id string
		switch strings.ToLower(c) {
		case "apple":
			id = "0"
		case "google":
			id = "1"
		case "facebook":
			id = "2"
		case "baidu":
			id = "3"
		default:
			if param == "" {
				continue
			}
			id = param
		}
		p.out = append(p.out, row(fmtInt(a[i]), fmtInt(bd[i]), fmtInt(pr[i]), c, id))
	}
}

func (p *q21Peer) answer() []string { return sorted(p.out) }

// q22: the first three directories of the url (split_part, 1-based; ""
// past the end).
type q22Peer struct{ out []string }

func (p *q22Peer) epoch(b *Batch) {
	a, bd, pr, ch, url := ints(b.Bid, bAuction), ints(b.Bid, bBidder), ints(b.Bid, bPrice), strs(b.Bid, bChannel), strs(b.Bid, bURL)
	for i := range a {
		parts := strings.SplitN(url.Value(i), "/", 7)
		part := func(n int) string { // n < 7: a whole part, not SplitN's rest
			if n <= len(parts) {
				return parts[n-1]
			}
			return ""
		}
		p.out = append(p.out, row(fmtInt(a[i]), fmtInt(bd[i]), fmtInt(pr[i]), ch.Value(i), part(4), part(5), part(6)))
	}
}

func (p *q22Peer) answer() []string { return sorted(p.out) }

// q15/q16: per group, bid counts and distinct bidders and auctions, in
// total and per price rank (< 10 000, < 1 000 000, above).
type bidStats struct {
	bids     [4]int64
	bidders  [4]map[int64]struct{}
	auctions [4]map[int64]struct{}
	minute   string
}

func newBidStats() *bidStats {
	s := &bidStats{}
	for i := range s.bidders {
		s.bidders[i] = map[int64]struct{}{}
		s.auctions[i] = map[int64]struct{}{}
	}
	return s
}

func (s *bidStats) add(price, bidder, auction int64) {
	r := 3
	switch {
	case price < 10000:
		r = 1
	case price < 1000000:
		r = 2
	}
	for _, k := range [2]int{0, r} {
		s.bids[k]++
		s.bidders[k][bidder] = struct{}{}
		s.auctions[k][auction] = struct{}{}
	}
}

func (s *bidStats) cols() []string {
	var out []string
	for _, n := range s.bids {
		out = append(out, fmtInt(n))
	}
	for _, m := range s.bidders {
		out = append(out, fmtInt(int64(len(m))))
	}
	for _, m := range s.auctions {
		out = append(out, fmtInt(int64(len(m))))
	}
	return out
}

// dayNames caches date_format(ts, 'yyyy-MM-dd') and 'HH:mm' by day and
// minute.
type dayNames struct{ days, minutes map[int64]string }

func (d *dayNames) day(ts int64) string {
	k := floorDiv(ts, day)
	s, ok := d.days[k]
	if !ok {
		s = time.UnixMicro(k * day).UTC().Format("2006-01-02")
		d.days[k] = s
	}
	return s
}

func (d *dayNames) minute(ts int64) string {
	k := floorDiv(ts, 60*second)
	s, ok := d.minutes[k]
	if !ok {
		s = time.UnixMicro(k * 60 * second).UTC().Format("15:04")
		d.minutes[k] = s
	}
	return s
}

type q15Peer struct {
	names  dayNames
	groups map[string]*bidStats
}

func newQ15Peer() *q15Peer {
	return &q15Peer{names: dayNames{map[int64]string{}, map[int64]string{}}, groups: map[string]*bidStats{}}
}

func (p *q15Peer) epoch(b *Batch) {
	a, bd, pr, ts := ints(b.Bid, bAuction), ints(b.Bid, bBidder), ints(b.Bid, bPrice), times(b.Bid, bTime)
	for i := range a {
		d := p.names.day(int64(ts[i]))
		g := p.groups[d]
		if g == nil {
			g = newBidStats()
			p.groups[d] = g
		}
		g.add(pr[i], bd[i], a[i])
	}
}

func (p *q15Peer) answer() []string {
	var rows []string
	for d, g := range p.groups {
		rows = append(rows, row(append([]string{d}, g.cols()...)...))
	}
	return sorted(rows)
}

type q16Peer struct {
	names  dayNames
	groups map[[2]string]*bidStats
}

func newQ16Peer() *q16Peer {
	return &q16Peer{names: dayNames{map[int64]string{}, map[int64]string{}}, groups: map[[2]string]*bidStats{}}
}

func (p *q16Peer) epoch(b *Batch) {
	a, bd, pr, ts, ch := ints(b.Bid, bAuction), ints(b.Bid, bBidder), ints(b.Bid, bPrice), times(b.Bid, bTime), strs(b.Bid, bChannel)
	for i := range a {
		k := [2]string{ch.Value(i), p.names.day(int64(ts[i]))}
		g := p.groups[k]
		if g == nil {
			g = newBidStats()
			p.groups[k] = g
		}
		g.add(pr[i], bd[i], a[i])
		g.minute = max(g.minute, p.names.minute(int64(ts[i])))
	}
}

func (p *q16Peer) answer() []string {
	var rows []string
	for k, g := range p.groups {
		rows = append(rows, row(append([]string{k[0], k[1], g.minute}, g.cols()...)...))
	}
	return sorted(rows)
}

// q18: the latest bid per (bidder, auction); of bids at the same time the
// first one stays (the engine's ranking is stable).
type q18Peer struct {
	batchRefs
	last map[[2]int64]q18Bid
}

type q18Bid struct {
	ts int64
	at ref
}

func newQ18Peer() *q18Peer { return &q18Peer{last: map[[2]int64]q18Bid{}} }

func (p *q18Peer) epoch(b *Batch) {
	bi := p.add(b)
	a, bd, ts := ints(b.Bid, bAuction), ints(b.Bid, bBidder), times(b.Bid, bTime)
	for i := range a {
		k := [2]int64{bd[i], a[i]}
		if cur, ok := p.last[k]; !ok || int64(ts[i]) > cur.ts {
			p.last[k] = q18Bid{int64(ts[i]), ref{bi, int32(i)}}
		}
	}
}

func (p *q18Peer) answer() []string {
	rows := make([]string, 0, len(p.last))
	for _, x := range p.last {
		rows = append(rows, row(p.bidCols(x.at)...))
	}
	return sorted(rows)
}

// q19: the 10 highest bids per auction; a bid tied with a kept one ranks
// after it.
type q19Peer struct {
	batchRefs
	top map[int64][]q19Bid
}

type q19Bid struct {
	price int64
	at    ref
}

func newQ19Peer() *q19Peer { return &q19Peer{top: map[int64][]q19Bid{}} }

func (p *q19Peer) epoch(b *Batch) {
	bi := p.add(b)
	a, pr := ints(b.Bid, bAuction), ints(b.Bid, bPrice)
	for i := range a {
		l := p.top[a[i]]
		pos := len(l)
		for pos > 0 && l[pos-1].price < pr[i] {
			pos--
		}
		if pos >= 10 {
			continue
		}
		l = append(l, q19Bid{})
		copy(l[pos+1:], l[pos:])
		l[pos] = q19Bid{pr[i], ref{bi, int32(i)}}
		if len(l) > 10 {
			l = l[:10]
		}
		p.top[a[i]] = l
	}
}

func (p *q19Peer) answer() []string {
	var rows []string
	for _, l := range p.top {
		for r, x := range l {
			rows = append(rows, row(append(p.bidCols(x.at), fmtInt(int64(r+1)))...))
		}
	}
	return sorted(rows)
}

// q9: per auction, its highest bid within its lifetime (ties: the
// earlier, then the lower bidder), for the auctions closed by the final
// watermark (as q4).
type q9Peer struct {
	batchRefs
	auctions             map[int64]*q9Auction
	pending              map[int64][]q9Bid
	maxExpires, maxBidTs int64
}

type q9Auction struct {
	ts, expires int64
	at          ref
	best        q9Bid
	matched     bool
}

type q9Bid struct{ price, ts, bidder int64 }

func newQ9Peer() *q9Peer {
	return &q9Peer{auctions: map[int64]*q9Auction{}, pending: map[int64][]q9Bid{}, maxExpires: noTime, maxBidTs: noTime}
}

func (a *q9Auction) bid(b q9Bid) {
	if b.ts < a.ts || b.ts > a.expires {
		return
	}
	x := a.best
	if !a.matched || b.price > x.price || b.price == x.price && (b.ts < x.ts || b.ts == x.ts && b.bidder < x.bidder) {
		a.best, a.matched = b, true
	}
}

func (p *q9Peer) epoch(b *Batch) {
	bi := p.add(b)
	ids, ts, exp := ints(b.Auction, aID), times(b.Auction, aTime), times(b.Auction, aExpires)
	for i, id := range ids {
		a := &q9Auction{ts: int64(ts[i]), expires: int64(exp[i]), at: ref{bi, int32(i)}}
		p.auctions[id] = a
		for _, x := range p.pending[id] {
			a.bid(x)
		}
		delete(p.pending, id)
	}
	p.maxExpires = maxTime(p.maxExpires, exp)
	bids, bts, prices, bidders := ints(b.Bid, bAuction), times(b.Bid, bTime), ints(b.Bid, bPrice), ints(b.Bid, bBidder)
	for i, id := range bids {
		x := q9Bid{prices[i], int64(bts[i]), bidders[i]}
		if a, ok := p.auctions[id]; ok {
			a.bid(x)
		} else {
			p.pending[id] = append(p.pending[id], x)
		}
	}
	p.maxBidTs = maxTime(p.maxBidTs, bts)
}

// answer lists the auctions the top-1 above the join has closed: those
// expiring at or below the join's output watermark, the global watermark
// less joinLag (as q4's aggregation over the same join sees it).
func (p *q9Peer) answer() []string {
	w := min(p.maxExpires-q4Delay, p.maxBidTs) - joinLag
	var rows []string
	for id, a := range p.auctions {
		if !a.matched || a.expires > w {
			continue
		}
		rec, i := p.batches[a.at.batch].Auction, int(a.at.row)
		rows = append(rows, row(fmtInt(id), strs(rec, aItemName).Value(i), fmtInt(ints(rec, aInitialBid)[i]), fmtInt(ints(rec, aReserve)[i]),
			fmtInt(a.ts), fmtInt(a.expires), fmtInt(ints(rec, aSeller)[i]), fmtInt(ints(rec, aCategory)[i]),
			fmtInt(id), fmtInt(a.best.bidder), fmtInt(a.best.price), fmtInt(a.best.ts)))
	}
	return sorted(rows)
}
