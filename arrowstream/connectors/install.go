package connectors

import (
	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/sink/console"
	"github.com/arrowstream/arrowstream/arrowstream/source/files"
	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/arrowstream/source/socket"
)

// InstallAll registers every built-in connector format with s.
func InstallAll(s *arrowstream.Session) {
	installers := []func(*arrowstream.Session){
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
