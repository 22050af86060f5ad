package arrowstream

import (
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
)

// StateStoreProviderFunc builds a state store provider from a query's
// effective settings (ConfStateStoreProvider selects it by name; the
// provider reads its own settings from conf).
type StateStoreProviderFunc = func(conf map[string]string, w *checkpoint.Writer, mem memory.Allocator) (checkpoint.StateStoreProvider, error)

// RegisterStateStoreProvider adds (or replaces) a state store provider.
// "memory" is built in; a larger-than-memory provider is registered by the
// program that links it (pebblestate.Register for "pebble"), so that the
// engine does not link every provider.
func (s *Session) RegisterStateStoreProvider(name string, open StateStoreProviderFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stateProvs[strings.ToLower(name)] = open
}

// memoryStateProvider is the built-in provider: state in memory, written
// to the checkpoint as delta and snapshot files.
func memoryStateProvider(_ map[string]string, w *checkpoint.Writer, mem memory.Allocator) (checkpoint.StateStoreProvider, error) {
	return checkpoint.NewMemoryProvider(w, checkpoint.StoreOptions{Allocator: mem}), nil
}

// stateProvider builds the provider the query's effective conf selects.
func (s *Session) stateProvider(conf map[string]string, w *checkpoint.Writer) (checkpoint.StateStoreProvider, error) {
	name := strings.ToLower(strings.TrimSpace(conf[ConfStateStoreProvider]))
	if name == "" {
		name = "memory"
	}
	s.mu.Lock()
	open, ok := s.stateProvs[name]
	var names []string
	for n := range s.stateProvs {
		names = append(names, n)
	}
	s.mu.Unlock()
	sort.Strings(names)
	if !ok {
		return nil, fmt.Errorf("arrowstream: option %s = %q: unknown state store provider (registered: %s)", ConfStateStoreProvider, conf[ConfStateStoreProvider], strings.Join(names, ", "))
	}
	return open(conf, w, s.mem)
}

// stateConfKey returns the canonical key of a query option that is a
// state store setting (matched case-insensitively: SQL table properties
// arrive in lower case); the writer copies those into the query's conf.
func stateConfKey(option string) (string, bool) {
	if strings.EqualFold(option, ConfStateStoreProvider) {
		return ConfStateStoreProvider, true
	}
	for _, k := range stream.StateTuningKeys() {
		if strings.EqualFold(option, k) {
			return k, true
		}
	}
	return "", false
}
