package connectors_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/connectors"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

// TestInstallAllRegistersSinkFormats: after InstallAll a writer finds each
// built-in sink format; without it the format is unknown.
func TestInstallAllRegistersSinkFormats(t *testing.T) {
	ctx := context.Background()
	for _, format := range []string{"console"} {
		for _, install := range []bool{false, true} {
			mem := poisonmem.New()
			s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, NoSync: true})
			if install {
				connectors.InstallAll(s)
			}
			src := arrowstream.NewMemoryStream(mem, arrow.NewSchema([]arrow.Field{{Name: "v", Type: vector.Int64}}, nil))
			s.RegisterStream("in", src)
			q, err := s.ReadStream("in").WriteStream().Format(format).Option("checkpointLocation", t.TempDir()).Start(ctx)
			switch {
			case install && err != nil:
				t.Errorf("%s after InstallAll: %v", format, err)
			case !install && (err == nil || !strings.Contains(err.Error(), "unknown sink format")):
				t.Errorf("%s without InstallAll: %v", format, err)
			}
			if q != nil {
				q.Stop()
			}
			src.Close()
			mem.AssertSize(t, 0)
		}
	}
}
