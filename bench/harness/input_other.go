//go:build !unix

package harness

import "errors"

const pageSize = 4096

func mapAnon(int) ([]byte, error) { return nil, errors.New("no anonymous mappings on this platform") }

func unmap([]byte) {}
