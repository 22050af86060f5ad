package nexmark

import (
	"fmt"
	"math"
	"time"
)

// Constants of the reference generator (Beam's and Flink's Nexmark
// GeneratorConfig, PersonGenerator, AuctionGenerator and BidGenerator).
const (
	// FirstPersonID, FirstAuctionID and FirstCategoryID start the id
	// spaces away from zero so that queries find matches on small data.
	FirstPersonID   = 1000
	FirstAuctionID  = 1000
	FirstCategoryID = 10
	// NumCategories is the number of auction categories.
	NumCategories = 5

	// Out of every totalProportion events, personProportion are people,
	// auctionProportion auctions and the rest bids (1:3:46 per 50).
	personProportion  = 1
	auctionProportion = 3
	bidProportion     = 46
	totalProportion   = personProportion + auctionProportion + bidProportion

	// personIDLead and auctionIDLead are the ids beyond the last one
	// generated that references may name ("yet-to-be-created" people and
	// auctions, as in the reference generator).
	personIDLead  = 10
	auctionIDLead = 10

	// A hot auction, seller or bidder is the first (for bidders the
	// second) of the last hotRatio ids.
	hotAuctionGroup = 100
	hotSellerGroup  = 100
	hotBidderGroup  = 100

	// Bids come through one of four hot channels with probability
	// 1 - 1/hotChannelsRatio, otherwise through one of channelsNumber
	// others.
	hotChannelsRatio = 2
	channelsNumber   = 10000
)

// Config shapes the generated events. The zero value of a field takes the
// reference generator's default (NexmarkConfiguration).
type Config struct {
	// Seed makes the data reproducible: the same seed gives the same
	// events.
	Seed uint64
	// BaseTime is the timestamp of the first event (default
	// 2026-01-01T00:00:00Z).
	BaseTime time.Time
	// EventRate is the event rate that spaces event timestamps, in events
	// per second of event time (default 10000, Beam's firstEventRate).
	// It shapes timestamps only: generation runs as fast as it can.
	EventRate int64
	// HotAuctionRatio: 1 - 1/ratio of bids go to the hot auction
	// (default 2).
	HotAuctionRatio int64
	// HotSellersRatio: 1 - 1/ratio of auctions are by the hot seller
	// (default 4).
	HotSellersRatio int64
	// HotBiddersRatio: 1 - 1/ratio of bids are by the hot bidder
	// (default 4).
	HotBiddersRatio int64
	// NumActivePeople bounds the people new auctions and bids refer to
	// when not hot (default 1000).
	NumActivePeople int64
	// NumInFlightAuctions bounds the auctions bids refer to when not hot,
	// and sets the average auction length (default 100).
	NumInFlightAuctions int64
	// AvgPersonByteSize, AvgAuctionByteSize and AvgBidByteSize are the
	// average sizes the extra column pads events to (defaults 200, 500,
	// 100).
	AvgPersonByteSize, AvgAuctionByteSize, AvgBidByteSize int
	// OutOfOrderGroupSize shuffles the timestamps of each group of this
	// many consecutive events (default 1: in order).
	OutOfOrderGroupSize int64
}

// withDefaults returns c with zero fields set to the reference defaults,
// or an error naming the first invalid field.
func (c Config) withDefaults() (Config, error) {
	if c.BaseTime.IsZero() {
		c.BaseTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	def := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.EventRate, 10_000)
	def(&c.HotAuctionRatio, 2)
	def(&c.HotSellersRatio, 4)
	def(&c.HotBiddersRatio, 4)
	def(&c.NumActivePeople, 1000)
	def(&c.NumInFlightAuctions, 100)
	def(&c.OutOfOrderGroupSize, 1)
	defInt := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defInt(&c.AvgPersonByteSize, 200)
	defInt(&c.AvgAuctionByteSize, 500)
	defInt(&c.AvgBidByteSize, 100)
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"EventRate", c.EventRate}, {"HotAuctionRatio", c.HotAuctionRatio}, {"HotSellersRatio", c.HotSellersRatio},
		{"HotBiddersRatio", c.HotBiddersRatio}, {"NumActivePeople", c.NumActivePeople},
		{"NumInFlightAuctions", c.NumInFlightAuctions}, {"OutOfOrderGroupSize", c.OutOfOrderGroupSize},
		{"AvgPersonByteSize", int64(c.AvgPersonByteSize)}, {"AvgAuctionByteSize", int64(c.AvgAuctionByteSize)},
		{"AvgBidByteSize", int64(c.AvgBidByteSize)},
	} {
		if f.v < 0 {
			return c, fmt.Errorf("nexmark: config %s = %d: must not be negative", f.name, f.v)
		}
	}
	if c.EventRate > 1_000_000_000 {
		return c, fmt.Errorf("nexmark: config EventRate = %d: at most 1e9 events/s", c.EventRate)
	}
	return c, nil
}

// lastBase0PersonID is the id (from 0) of the last person generated at or
// before event id.
func lastBase0PersonID(id int64) int64 {
	epoch, off := id/totalProportion, id%totalProportion
	if off >= personProportion {
		off = personProportion - 1
	}
	return epoch*personProportion + off
}

// lastBase0AuctionID is the id (from 0) of the last auction generated at
// or before event id.
func lastBase0AuctionID(id int64) int64 {
	epoch, off := id/totalProportion, id%totalProportion
	switch {
	case off < personProportion:
		epoch--
		off = auctionProportion - 1
	case off >= personProportion+auctionProportion:
		off = auctionProportion - 1
	default:
		off -= personProportion
	}
	return epoch*auctionProportion + off
}

// nextBase0PersonID picks a person among the active ones, plus a few
// not yet created.
func (c *Config) nextBase0PersonID(id int64, r *rng) int64 {
	numPeople := lastBase0PersonID(id) + 1
	active := min(numPeople, c.NumActivePeople)
	return numPeople - active + r.intn(active+personIDLead)
}

// nextBase0AuctionID picks an auction among those likely still in flight,
// plus a few not yet created.
func (c *Config) nextBase0AuctionID(id int64, r *rng) int64 {
	maxA := lastBase0AuctionID(id)
	minA := max(maxA-c.NumInFlightAuctions, 0)
	return minA + r.intn(maxA-minA+1+auctionIDLead)
}

// timestampMs is the event time (ms since the Unix epoch) of event number n.
func (c *Config) timestampMs(n int64) int64 {
	// 1e6/rate µs between events; integer arithmetic in ns keeps it exact
	// for rates that divide 1e9.
	return c.BaseTime.UnixMilli() + n*(1_000_000_000/c.EventRate)/1_000_000
}

// adjustedEventNumber shuffles event numbers within groups of
// OutOfOrderGroupSize, as the reference generator does.
func (c *Config) adjustedEventNumber(n int64) int64 {
	g := c.OutOfOrderGroupSize
	return n/g*g + (n*953)%g
}

// auctionLengthMs draws an auction's length: uniform up to twice the time
// until NumInFlightAuctions more auctions are generated.
func (c *Config) auctionLengthMs(n int64, r *rng, ts int64) int64 {
	ahead := c.NumInFlightAuctions * totalProportion / auctionProportion
	horizon := c.timestampMs(c.adjustedEventNumber(n)+ahead) - ts
	return 1 + r.intn(max(horizon*2, 1))
}

// nextPrice is log-uniform in cents over [1, 1e6) dollars.
func nextPrice(r *rng) int64 { return int64(math.Floor(math.Pow(10, r.float()*6)*100 + 0.5)) }
