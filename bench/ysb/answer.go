package ysb

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// WindowMicros is the tumbling window of the query: 10 seconds.
const WindowMicros = 10_000_000

// WindowKey is one output row's key: a campaign and a window's start (µs).
type WindowKey struct {
	Campaign string
	Start    int64
}

// Answer is the query's result: the view count per campaign and window.
type Answer map[WindowKey]int64

// windowStart is the start of the 10 s window holding t (µs, t ≥ 0).
func windowStart(t int64) int64 { return t - t%WindowMicros }

// Reference computes the answer from the generated indices directly (no
// strings, no Arrow): the check every engine and peer is held to.
func (d *Data) Reference(lo, hi int) Answer {
	counts := make(map[[2]int64]int64)
	for i := lo; i < hi; i++ {
		if d.EventType[i] != 0 {
			continue
		}
		counts[[2]int64{int64(d.Ad[i]) / AdsPerCampaign, windowStart(d.Time[i])}]++
	}
	out := make(Answer, len(counts))
	for k, n := range counts {
		out[WindowKey{d.CampaignIDs[k[0]], k[1]}] = n
	}
	return out
}

// Diff describes how got differs from want (empty when equal), naming at
// most a few differing rows.
func Diff(got, want Answer) string {
	var diffs []string
	keys := slices.SortedFunc(maps.Keys(want), cmpKey)
	for _, k := range keys {
		if g, ok := got[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("missing (campaign %s, window %d): want %d", k.Campaign, k.Start, want[k]))
		} else if g != want[k] {
			diffs = append(diffs, fmt.Sprintf("(campaign %s, window %d): got %d, want %d", k.Campaign, k.Start, g, want[k]))
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(got), cmpKey) {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("unexpected (campaign %s, window %d): %d", k.Campaign, k.Start, got[k]))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	s := fmt.Sprintf("%d rows differ (got %d rows, want %d)", len(diffs), len(got), len(want))
	for _, d := range diffs[:min(len(diffs), 3)] {
		s += "; " + d
	}
	return s
}

func cmpKey(a, b WindowKey) int {
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	return cmp.Compare(a.Campaign, b.Campaign)
}
