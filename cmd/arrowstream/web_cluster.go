package main

import (
	"net/http"
	"time"
)

// rebalanceInfo is one rebalance of a cluster table's group in the web
// API (the JSON twin of system.cluster_rebalances).
type rebalanceInfo struct {
	Table      string   `json:"table"`
	Group      string   `json:"group"`
	Start      string   `json:"start"`
	Generation int32    `json:"generation"`
	Assigned   []string `json:"assigned"`
	Revoked    []string `json:"revoked"`
	Lost       []string `json:"lost"`
	Owned      int      `json:"ownedAfter"`
	// PausedMs is how long processing of the table paused; null while it
	// has not resumed.
	PausedMs *int64 `json:"pausedMs"`
}

// clusterRebalances is GET /api/cluster/rebalances.
type clusterRebalances struct {
	Cluster    string          `json:"cluster"` // "" outside cluster mode
	Rebalances []rebalanceInfo `json:"rebalances"`
}

// GET /api/cluster/rebalances: this instance's recent rebalances of each
// cluster table's group (tables the caller may read), oldest first per
// table; an empty list outside cluster mode.
func (a *webAPI) rebalances(w http.ResponseWriter, r *http.Request) {
	out := clusterRebalances{Rebalances: []rebalanceInfo{}}
	if c := a.e.cluster; c != nil {
		out.Cluster = c.Name()
		for _, rb := range c.Rebalances() {
			if !a.web.mayRead(r, rb.Table) {
				continue
			}
			ri := rebalanceInfo{Table: rb.Table, Group: rb.Group, Start: rb.Start.UTC().Format(time.RFC3339Nano),
				Generation: rb.Generation, Assigned: nonNil(rb.Assigned), Revoked: nonNil(rb.Revoked), Lost: nonNil(rb.Lost), Owned: rb.Owned}
			if rb.Resumed {
				ms := rb.Paused.Milliseconds()
				ri.PausedMs = &ms
			}
			out.Rebalances = append(out.Rebalances, ri)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
