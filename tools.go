//go:build tools

// This file pins modules that later packages use (ADBC for the Flight SQL
// tests and clients, klauspost/compress for checkpoint files) so that go mod
// tidy keeps them at the versions the project requires.
package tools

import (
	_ "github.com/apache/arrow-adbc/go/adbc"
	_ "github.com/klauspost/compress/zstd"
)
