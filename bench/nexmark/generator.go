package nexmark

import (
	"fmt"
	"math/bits"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// Generator produces the Nexmark event stream in batches of Arrow records,
// one record per event type. It is deterministic: event n depends only on
// the Config (its Seed included) and n. Not safe for concurrent use.
type Generator struct {
	cfg  Config
	mem  memory.Allocator
	next int64 // number of the next event (its id: one generator, first id 0)
	r    rng

	person  personCols
	auction auctionCols
	bid     bidCols

	// The bid channels and their urls (the reference generator caches
	// channelsNumber of them), and the hot channels' urls.
	channels, urls []string
	hotURLs        []string
}

type personCols struct {
	id, ts                                    intCol
	name, email, creditCard, city, state, ext strCol
}

type auctionCols struct {
	id, initialBid, reserve, ts, expires, seller, category intCol
	itemName, description, ext                             strCol
}

type bidCols struct {
	auction, bidder, price, ts intCol
	channel, url, ext          strCol
}

// NewGenerator returns a generator of cfg's events whose records are
// allocated from mem.
func NewGenerator(mem memory.Allocator, cfg Config) (*Generator, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	g := &Generator{cfg: c, mem: mem}
	// The channel cache comes from its own stream (event id -1).
	var r rng
	r.seedFor(c.Seed, -1)
	var buf []byte
	baseURL := func() string {
		buf = append(buf[:0], "https://www.nexmark.com/"...)
		for i := range 3 {
			if i > 0 {
				buf = append(buf, '/')
			}
			buf = r.appendString(buf, 5, '_')
		}
		buf = append(buf, "/item.htm?query=1"...)
		return string(buf)
	}
	g.channels = make([]string, channelsNumber)
	g.urls = make([]string, channelsNumber)
	for i := range channelsNumber {
		g.channels[i] = "channel-" + strconv.Itoa(i)
		u := baseURL()
		if r.intn(10) > 0 {
			rev := int32(bits.Reverse32(uint32(i)))
			if rev < 0 {
				rev = -rev
			}
			u += "&channel_id=" + strconv.Itoa(int(rev))
		}
		g.urls[i] = u
	}
	for range hotChannels {
		g.hotURLs = append(g.hotURLs, baseURL())
	}
	return g, nil
}

// Batch is a run of consecutive events split by type. Its records are
// owned by the holder (Release them); a type without events in the run
// has an empty record.
type Batch struct {
	// FirstEvent is the number of the batch's first event; Events the
	// number of events in it.
	FirstEvent, Events   int64
	Person, Auction, Bid arrow.Record
}

// Release releases the batch's records.
func (b *Batch) Release() {
	for _, r := range []arrow.Record{b.Person, b.Auction, b.Bid} {
		if r != nil {
			r.Release()
		}
	}
	b.Person, b.Auction, b.Bid = nil, nil, nil
}

// Generated is the number of events generated so far.
func (g *Generator) Generated() int64 { return g.next }

// Next generates the next n events (n > 0).
func (g *Generator) Next(n int) (Batch, error) {
	if n <= 0 {
		return Batch{}, fmt.Errorf("nexmark: batch of %d events: must be positive", n)
	}
	g.resetCols()
	first := g.next
	for ; g.next < first+int64(n); g.next++ {
		id := g.next
		ts := g.cfg.timestampMs(g.cfg.adjustedEventNumber(g.next))
		g.r.seedFor(g.cfg.Seed, id)
		switch rem := id % totalProportion; {
		case rem < personProportion:
			g.genPerson(id, ts)
		case rem < personProportion+auctionProportion:
			g.genAuction(id, ts)
		default:
			g.genBid(id, ts)
		}
	}
	return Batch{FirstEvent: first, Events: int64(n), Person: g.personRecord(), Auction: g.auctionRecord(), Bid: g.bidRecord()}, nil
}

func (g *Generator) resetCols() {
	p, a, b := &g.person, &g.auction, &g.bid
	for _, c := range []*intCol{&p.id, &p.ts, &a.id, &a.initialBid, &a.reserve, &a.ts, &a.expires, &a.seller, &a.category,
		&b.auction, &b.bidder, &b.price, &b.ts} {
		c.reset()
	}
	for _, c := range []*strCol{&p.name, &p.email, &p.creditCard, &p.city, &p.state, &p.ext, &a.itemName, &a.description, &a.ext,
		&b.channel, &b.url, &b.ext} {
		c.reset()
	}
}

func (g *Generator) genPerson(id, ts int64) {
	p, r := &g.person, &g.r
	p.id.v = append(p.id.v, lastBase0PersonID(id)+FirstPersonID)
	start := len(p.name.data)
	p.name.data = append(p.name.data, firstNames[r.intn(int64(len(firstNames)))]...)
	p.name.data = append(p.name.data, ' ')
	p.name.data = append(p.name.data, lastNames[r.intn(int64(len(lastNames)))]...)
	size := len(p.name.data) - start
	p.name.end()

	start = len(p.email.data)
	p.email.data = r.appendString(p.email.data, 7, ' ')
	p.email.data = append(p.email.data, '@')
	p.email.data = r.appendString(p.email.data, 5, ' ')
	p.email.data = append(p.email.data, ".com"...)
	size += len(p.email.data) - start
	p.email.end()

	for i := range 4 {
		if i > 0 {
			p.creditCard.data = append(p.creditCard.data, ' ')
		}
		d := r.intn(10000)
		p.creditCard.data = append(p.creditCard.data, byte('0'+d/1000), byte('0'+d/100%10), byte('0'+d/10%10), byte('0'+d%10))
	}
	size += 19
	p.creditCard.end()
	city, state := usCities[r.intn(int64(len(usCities)))], usStates[r.intn(int64(len(usStates)))]
	p.city.appendString(city)
	p.state.appendString(state)
	p.ts.v = append(p.ts.v, ts*1000)
	p.ext.data = r.appendExtra(p.ext.data, 8+size+len(city)+len(state), g.cfg.AvgPersonByteSize)
	p.ext.end()
}

func (g *Generator) genAuction(id, ts int64) {
	a, r, c := &g.auction, &g.r, &g.cfg
	a.id.v = append(a.id.v, lastBase0AuctionID(id)+FirstAuctionID)
	var seller int64
	if r.intn(c.HotSellersRatio) > 0 {
		seller = lastBase0PersonID(id) / hotSellerGroup * hotSellerGroup
	} else {
		seller = c.nextBase0PersonID(id, r)
	}
	a.seller.v = append(a.seller.v, seller+FirstPersonID)
	a.category.v = append(a.category.v, FirstCategoryID+r.intn(NumCategories))
	initial := nextPrice(r)
	a.initialBid.v = append(a.initialBid.v, initial)
	a.ts.v = append(a.ts.v, ts*1000)
	a.expires.v = append(a.expires.v, (ts+c.auctionLengthMs(id, r, ts))*1000)
	start := len(a.itemName.data)
	a.itemName.data = r.appendString(a.itemName.data, 20, ' ')
	size := len(a.itemName.data) - start
	a.itemName.end()
	start = len(a.description.data)
	a.description.data = r.appendString(a.description.data, 100, ' ')
	size += len(a.description.data) - start
	a.description.end()
	a.reserve.v = append(a.reserve.v, initial+nextPrice(r))
	a.ext.data = r.appendExtra(a.ext.data, 8+size+40, c.AvgAuctionByteSize)
	a.ext.end()
}

func (g *Generator) genBid(id, ts int64) {
	b, r, c := &g.bid, &g.r, &g.cfg
	var auction, bidder int64
	if r.intn(c.HotAuctionRatio) > 0 {
		auction = lastBase0AuctionID(id) / hotAuctionGroup * hotAuctionGroup
	} else {
		auction = c.nextBase0AuctionID(id, r)
	}
	if r.intn(c.HotBiddersRatio) > 0 {
		// The second of the group, so that hot bidders and hot sellers
		// differ.
		bidder = lastBase0PersonID(id)/hotBidderGroup*hotBidderGroup + 1
	} else {
		bidder = c.nextBase0PersonID(id, r)
	}
	b.auction.v = append(b.auction.v, auction+FirstAuctionID)
	b.bidder.v = append(b.bidder.v, bidder+FirstPersonID)
	b.price.v = append(b.price.v, nextPrice(r))
	if r.intn(hotChannelsRatio) > 0 {
		i := r.intn(int64(len(hotChannels)))
		b.channel.appendString(hotChannels[i])
		b.url.appendString(g.hotURLs[i])
	} else {
		i := r.intn(channelsNumber)
		b.channel.appendString(g.channels[i])
		b.url.appendString(g.urls[i])
	}
	b.ts.v = append(b.ts.v, ts*1000)
	b.ext.data = r.appendExtra(b.ext.data, 32, c.AvgBidByteSize)
	b.ext.end()
}

func (g *Generator) record(schema *arrow.Schema, n int, cols ...func() arrow.Array) arrow.Record {
	arrs := make([]arrow.Array, len(cols))
	for i, f := range cols {
		arrs[i] = f()
	}
	rec := array.NewRecord(schema, arrs, int64(n))
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

func (g *Generator) ints(c *intCol) func() arrow.Array {
	return func() arrow.Array { return c.array(g.mem, vector.Int64) }
}

func (g *Generator) times(c *intCol) func() arrow.Array {
	return func() arrow.Array { return c.array(g.mem, vector.Timestamp) }
}

func (g *Generator) strs(c *strCol) func() arrow.Array {
	return func() arrow.Array { return c.array(g.mem) }
}

func (g *Generator) personRecord() arrow.Record {
	p := &g.person
	return g.record(PersonSchema, len(p.id.v), g.ints(&p.id), g.strs(&p.name), g.strs(&p.email), g.strs(&p.creditCard),
		g.strs(&p.city), g.strs(&p.state), g.times(&p.ts), g.strs(&p.ext))
}

func (g *Generator) auctionRecord() arrow.Record {
	a := &g.auction
	return g.record(AuctionSchema, len(a.id.v), g.ints(&a.id), g.strs(&a.itemName), g.strs(&a.description),
		g.ints(&a.initialBid), g.ints(&a.reserve), g.times(&a.ts), g.times(&a.expires), g.ints(&a.seller),
		g.ints(&a.category), g.strs(&a.ext))
}

func (g *Generator) bidRecord() arrow.Record {
	b := &g.bid
	return g.record(BidSchema, len(b.auction.v), g.ints(&b.auction), g.ints(&b.bidder), g.ints(&b.price),
		g.strs(&b.channel), g.strs(&b.url), g.times(&b.ts), g.strs(&b.ext))
}
