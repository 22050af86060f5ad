package ysb

import (
	"fmt"
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// The benchmark's fixed proportions, as in the Yahoo benchmark's setup:
// 100 campaigns of 10 ads each, and small pools of user and page ids.
const (
	Campaigns      = 100
	AdsPerCampaign = 10
	Ads            = Campaigns * AdsPerCampaign
	userPool       = 100
	pagePool       = 100
	ipPool         = 256
)

// Event types and ad types in the order of their dictionary indices.
var (
	EventTypes = []string{"view", "click", "purchase"}
	AdTypes    = []string{"banner", "modal", "sponsored-search", "mail", "mobile"}
)

// rng is splitmix64: a fixed, fully specified generator, so that the data
// is the same on every machine and Go version.
type rng struct{ state uint64 }

func (r *rng) next() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// below returns a value in [0, n); the tiny modulo bias of a multiply-shift
// does not matter for benchmark data.
func (r *rng) below(n uint64) uint64 {
	hi, _ := bits.Mul64(r.next(), n)
	return hi
}

// uuid formats a deterministic UUID-shaped id (the Yahoo benchmark's ids are
// UUID strings).
func uuid(r *rng) string {
	a, b := r.next(), r.next()
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", uint32(a>>32), uint16(a>>16), uint16(a), uint16(b>>48), b&0xffffffffffff)
}

// Data is one generated YSB data set: the dictionaries (the distinct string
// values) and, per event, the index of each string column's value plus the
// event time. Records of any encoding are built from it, so every encoding
// and every peer sees the same events.
type Data struct {
	// CampaignIDs[c] is campaign c's id; AdIDs[a] is ad a's id, and ad a
	// belongs to campaign a / AdsPerCampaign.
	CampaignIDs, AdIDs []string
	UserIDs, PageIDs   []string
	IPs                []string
	// Per event: ad index, event type index, ad type index, user, page and
	// ip indices, and the event time in microseconds since the epoch.
	Ad                []int16
	EventType, AdType []int8
	User, Page, IP    []uint8
	Time              []int64
}

// StartMicros is the event time of the first event: 2026-01-01T00:00:00Z.
const StartMicros = 1_767_225_600_000_000

// Generate returns n events whose event times advance evenly at
// eventsPerSecond (so one 10 s window holds 10 × eventsPerSecond events),
// with ads, users, pages and event types drawn uniformly.
func Generate(n int, eventsPerSecond int64, seed uint64) *Data {
	if eventsPerSecond <= 0 {
		eventsPerSecond = 1_000_000
	}
	r := &rng{state: seed}
	d := &Data{}
	for range Campaigns {
		d.CampaignIDs = append(d.CampaignIDs, uuid(r))
	}
	for range Ads {
		d.AdIDs = append(d.AdIDs, uuid(r))
	}
	for range userPool {
		d.UserIDs = append(d.UserIDs, uuid(r))
	}
	for range pagePool {
		d.PageIDs = append(d.PageIDs, uuid(r))
	}
	for i := range ipPool {
		d.IPs = append(d.IPs, fmt.Sprintf("10.%d.%d.%d", i/64, i%64, (i*7)%256))
	}
	d.Ad = make([]int16, n)
	d.EventType = make([]int8, n)
	d.AdType = make([]int8, n)
	d.User = make([]uint8, n)
	d.Page = make([]uint8, n)
	d.IP = make([]uint8, n)
	d.Time = make([]int64, n)
	for i := range n {
		x := r.next()
		d.Ad[i] = int16((x & 0xffff) * Ads >> 16)
		d.EventType[i] = int8(((x >> 16) & 0xffff) * 3 >> 16)
		d.AdType[i] = int8(((x >> 32) & 0xff) * uint64(len(AdTypes)) >> 8)
		d.User[i] = uint8(((x >> 40) & 0xff) * userPool >> 8)
		d.Page[i] = uint8(((x >> 48) & 0xff) * pagePool >> 8)
		d.IP[i] = uint8(x >> 56)
		d.Time[i] = StartMicros + int64(i)*1_000_000/eventsPerSecond
	}
	return d
}

// Len is the number of events.
func (d *Data) Len() int { return len(d.Time) }

// Encoding says how string columns are represented in records.
type Encoding int

const (
	// Plain strings (arrow utf8).
	Plain Encoding = iota
	// Dict is dictionary-encoded strings (int8 or int16 indices into a
	// dictionary of the distinct values).
	Dict
)

func (e Encoding) String() string {
	if e == Dict {
		return "dict"
	}
	return "plain"
}

func dictType(index arrow.DataType) arrow.DataType {
	return &arrow.DictionaryType{IndexType: index, ValueType: arrow.BinaryTypes.String}
}

// Schema is the event schema of an encoding.
func Schema(e Encoding) *arrow.Schema {
	str := func(idx arrow.DataType) arrow.DataType {
		if e == Dict {
			return dictType(idx)
		}
		return arrow.BinaryTypes.String
	}
	return arrow.NewSchema([]arrow.Field{
		{Name: "user_id", Type: str(arrow.PrimitiveTypes.Uint8)},
		{Name: "page_id", Type: str(arrow.PrimitiveTypes.Uint8)},
		{Name: "ad_id", Type: str(arrow.PrimitiveTypes.Int16)},
		{Name: "ad_type", Type: str(arrow.PrimitiveTypes.Int8)},
		{Name: "event_type", Type: str(arrow.PrimitiveTypes.Int8)},
		{Name: "event_time", Type: vector.Timestamp},
		{Name: "ip_address", Type: str(arrow.PrimitiveTypes.Uint8)},
	}, nil)
}

// CampaignSchema is the static table's schema in encoding e: with Dict,
// both columns are dictionary-encoded (campaign_id's dictionary holds the
// 100 campaign ids, one index per ad), as a dimension table kept in Arrow
// would be.
func CampaignSchema(e Encoding) *arrow.Schema {
	var ad, camp arrow.DataType = arrow.BinaryTypes.String, arrow.BinaryTypes.String
	if e == Dict {
		ad, camp = dictType(arrow.PrimitiveTypes.Int16), dictType(arrow.PrimitiveTypes.Int16)
	}
	return arrow.NewSchema([]arrow.Field{
		{Name: "ad_id", Type: ad},
		{Name: "campaign_id", Type: camp},
	}, nil)
}

// CampaignRecord is the static ad → campaign table (Ads rows) in encoding
// e, owned by the caller.
func (d *Data) CampaignRecord(mem memory.Allocator, e Encoding) arrow.Record {
	idx, ads := make([]int, Ads), make([]int, Ads)
	for a := range idx {
		idx[a], ads[a] = a/AdsPerCampaign, a
	}
	ad := d.column(mem, e, d.AdIDs, ads, arrow.PrimitiveTypes.Int16)
	defer ad.Release()
	c := d.column(mem, e, d.CampaignIDs, idx, arrow.PrimitiveTypes.Int16)
	defer c.Release()
	return array.NewRecord(CampaignSchema(e), []arrow.Array{ad, c}, Ads)
}

// Records returns events [lo, hi) as records of at most batchRows rows in
// encoding e, owned by the caller. Columns are written in bulk (offsets and
// bytes, or dictionary indices), not value by value.
func (d *Data) Records(mem memory.Allocator, e Encoding, lo, hi, batchRows int) []arrow.Record {
	var recs []arrow.Record
	schema := Schema(e)
	for b := lo; b < hi; b += batchRows {
		end := min(b+batchRows, hi)
		cols := []arrow.Array{
			d.column(mem, e, d.UserIDs, widen(d.User[b:end]), arrow.PrimitiveTypes.Uint8),
			d.column(mem, e, d.PageIDs, widen(d.Page[b:end]), arrow.PrimitiveTypes.Uint8),
			d.column(mem, e, d.AdIDs, widen(d.Ad[b:end]), arrow.PrimitiveTypes.Int16),
			d.column(mem, e, AdTypes, widen(d.AdType[b:end]), arrow.PrimitiveTypes.Int8),
			d.column(mem, e, EventTypes, widen(d.EventType[b:end]), arrow.PrimitiveTypes.Int8),
			timestamps(mem, d.Time[b:end]),
			d.column(mem, e, d.IPs, widen(d.IP[b:end]), arrow.PrimitiveTypes.Uint8),
		}
		recs = append(recs, array.NewRecord(schema, cols, int64(end-b)))
		for _, c := range cols {
			c.Release()
		}
	}
	return recs
}

type smallInt interface{ ~int8 | ~uint8 | ~int16 }

func widen[T smallInt](v []T) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

func (d *Data) column(mem memory.Allocator, e Encoding, dict []string, idx []int, idxType arrow.DataType) arrow.Array {
	if e == Plain {
		return stringArray(mem, dict, idx)
	}
	values := stringArray(mem, dict, nil)
	defer values.Release()
	width := idxType.(arrow.FixedWidthDataType).Bytes()
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(len(idx) * width)
	raw := buf.Bytes()
	for i, x := range idx {
		switch width {
		case 1:
			raw[i] = byte(x)
		case 2:
			raw[2*i], raw[2*i+1] = byte(x), byte(x>>8) // little endian
		}
	}
	data := array.NewData(idxType, len(idx), []*memory.Buffer{nil, buf}, nil, 0, 0)
	buf.Release()
	defer data.Release()
	ixArr := array.MakeFromData(data)
	defer ixArr.Release()
	return array.NewDictionaryArray(dictType(idxType), ixArr, values)
}

// stringArray builds a utf8 array of dict[idx[i]] (or of dict itself when
// idx is nil) with one pass for the offsets and one for the bytes.
func stringArray(mem memory.Allocator, dict []string, idx []int) arrow.Array {
	n := len(dict)
	if idx != nil {
		n = len(idx)
	}
	at := func(i int) string {
		if idx == nil {
			return dict[i]
		}
		return dict[idx[i]]
	}
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize((n + 1) * 4)
	offs := arrow.Int32Traits.CastFromBytes(offBuf.Bytes())
	total := 0
	for i := range n {
		offs[i] = int32(total)
		total += len(at(i))
	}
	offs[n] = int32(total)
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(total)
	raw := dataBuf.Bytes()
	for i := range n {
		copy(raw[offs[i]:], at(i))
	}
	data := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{nil, offBuf, dataBuf}, nil, 0, 0)
	offBuf.Release()
	dataBuf.Release()
	defer data.Release()
	return array.MakeFromData(data)
}

func timestamps(mem memory.Allocator, ts []int64) arrow.Array {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(len(ts) * 8)
	copy(arrow.Int64Traits.CastFromBytes(buf.Bytes()), ts)
	data := array.NewData(vector.Timestamp, len(ts), []*memory.Buffer{nil, buf}, nil, 0, 0)
	buf.Release()
	defer data.Release()
	return array.MakeFromData(data)
}

// releaseEpochs releases every record of epochs.
func releaseEpochs(epochs [][]arrow.Record) {
	for _, e := range epochs {
		for _, r := range e {
			r.Release()
		}
	}
}
