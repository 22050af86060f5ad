//go:build !unix

package memsink

import "errors"

const pageSize = 4096

// Without mmap every allocation falls back to the Go heap.
func mapAnon(int) ([]byte, error) { return nil, errors.New("no anonymous mappings on this platform") }

func unmap([]byte) {}
