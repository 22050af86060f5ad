package ysb

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// GoPeer is the "write it yourself" peer: the query as a Go programmer
// would write it without an engine, with maps and loops over the same
// Arrow records the engine reads. It is what Arrowstream must beat to be
// worth its abstraction.
type GoPeer struct {
	adCampaign map[string]string
	counts     map[WindowKey]int64
}

// NewGoPeer builds the peer's ad → campaign map from the static table.
func NewGoPeer(campaigns arrow.Record) (*GoPeer, error) {
	ad, err := Strings(campaigns.Column(0))
	if err != nil {
		return nil, fmt.Errorf("ysb: go peer: campaigns.ad_id: %w", err)
	}
	camp, err := Strings(campaigns.Column(1))
	if err != nil {
		return nil, fmt.Errorf("ysb: go peer: campaigns.campaign_id: %w", err)
	}
	p := &GoPeer{adCampaign: make(map[string]string, len(ad)), counts: make(map[WindowKey]int64)}
	for i, a := range ad {
		p.adCampaign[a] = camp[i]
	}
	return p, nil
}

// Process adds one record's events (either encoding) to the counts.
func (p *GoPeer) Process(rec arrow.Record) error {
	ts, ok := rec.Column(5).(*array.Timestamp)
	if !ok {
		return fmt.Errorf("ysb: go peer: event_time is %s", rec.Column(5).DataType())
	}
	times := ts.TimestampValues()
	switch et := rec.Column(4).(type) {
	case *array.String:
		ad, ok := rec.Column(2).(*array.String)
		if !ok {
			return fmt.Errorf("ysb: go peer: ad_id is %s", rec.Column(2).DataType())
		}
		for i := range et.Len() {
			if et.Value(i) != "view" {
				continue
			}
			c, ok := p.adCampaign[ad.Value(i)]
			if !ok {
				continue // inner join: an unknown ad has no campaign
			}
			p.counts[WindowKey{c, windowStart(int64(times[i]))}]++
		}
	case *array.Dictionary:
		ad, ok := rec.Column(2).(*array.Dictionary)
		if !ok {
			return fmt.Errorf("ysb: go peer: ad_id is %s", rec.Column(2).DataType())
		}
		// Translate the dictionaries once per record, then loop over
		// indices: the obvious thing to do with dictionary input.
		etDict, ok1 := et.Dictionary().(*array.String)
		adDict, ok2 := ad.Dictionary().(*array.String)
		if !ok1 || !ok2 {
			return fmt.Errorf("ysb: go peer: dictionaries of %s and %s", et.DataType(), ad.DataType())
		}
		isView := make([]bool, etDict.Len())
		for i := range isView {
			isView[i] = etDict.Value(i) == "view"
		}
		campOf := make([]string, adDict.Len())
		known := make([]bool, adDict.Len())
		for i := range campOf {
			campOf[i], known[i] = p.adCampaign[adDict.Value(i)]
		}
		for i := range et.Len() {
			if !isView[et.GetValueIndex(i)] {
				continue
			}
			a := ad.GetValueIndex(i)
			if !known[a] {
				continue
			}
			p.counts[WindowKey{campOf[a], windowStart(int64(times[i]))}]++
		}
	default:
		return fmt.Errorf("ysb: go peer: event_type is %s", et.DataType())
	}
	return nil
}

// Answer is the counts so far (owned by the peer).
func (p *GoPeer) Answer() Answer { return p.counts }

// Strings returns the values of a utf8 or dictionary<_, utf8> array
// without nulls.
func Strings(a arrow.Array) ([]string, error) {
	if a.NullN() != 0 {
		return nil, fmt.Errorf("%d nulls", a.NullN())
	}
	out := make([]string, a.Len())
	switch x := a.(type) {
	case *array.String:
		for i := range out {
			out[i] = x.Value(i)
		}
	case *array.Dictionary:
		dict, ok := x.Dictionary().(*array.String)
		if !ok {
			return nil, fmt.Errorf("dictionary of %s", x.Dictionary().DataType())
		}
		for i := range out {
			out[i] = dict.Value(x.GetValueIndex(i))
		}
	default:
		return nil, fmt.Errorf("column of %s, want strings", a.DataType())
	}
	return out, nil
}
