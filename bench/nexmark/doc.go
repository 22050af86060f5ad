// Package nexmark is the Nexmark benchmark of Arrowstream: a generator of
// the Person / Auction / Bid event streams as the Flink and Beam Nexmark
// generators define them, the Nexmark queries written in Arrowstream's SQL
// and run through the real engine (a Session, three memory streams fed
// epoch by epoch, results in the memory sink), and beside each query a
// straightforward Go implementation over the same Arrow batches (the
// "write it yourself" peer) whose answer is checked against the engine's
// before its time counts.
//
// The generator follows the reference generator's definitions (event
// proportions, id spaces, hot auctions, bidders and sellers, price, auction
// length and string distributions, bid channels and urls, extra padding),
// drawing from its own splitmix64 stream seeded per event: the data has
// the same distributions as the reference generator's, not the same bytes.
//
// [Workloads] exposes one harness.Workload per query for `arrowstream
// bench`; README.md lists the queries, where they deviate from the
// reference Nexmark SQL and why.
package nexmark
