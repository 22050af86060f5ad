// Package serving is the "flight" benchmark workload: reading a memory-sink
// table of YSB events through Arrowstream's Flight server (bulk DoGet rows/s
// and the latency of a small DoGet), beside a bare arrow Flight server that
// serves the same records with no engine behind it. It is apart from
// package ysb so that the DuckDB peer module, which imports ysb, does not
// pull in gRPC.
package serving
