// Package pebblestate registers the Pebble state store provider
// (checkpoint/pebblestore) under the name "pebble", configured by the
// stream.ConfPebble* settings. The arrowstream package does not link
// Pebble: programs that want the provider (the command, benchmarks,
// tests) call Register on their sessions.
package pebblestate
