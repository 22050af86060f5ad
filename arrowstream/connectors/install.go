package connectors

import (
	"github.com/arrowstream/arrowstream/arrowstream/sink/console"
	"github.com/arrowstream/arrowstream/arrowstream/source/files"
	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/arrowstream/source/socket"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// InstallAll registers every built-in connector format with s.
func InstallAll(s stream.FormatRegistrar) {
	installers := []func(stream.FormatRegistrar){
		// One line per connector package (keep sorted).
		console.Install,
		files.Install,
		kafka.Install,
		socket.Install,
	}
	for _, install := range installers {
		install(s)
	}
}
