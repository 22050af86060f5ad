package arrowstream

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/sink/console"
	"github.com/arrowstream/arrowstream/memsink"
)

// TestWriterRejectsUnknownSinkOptions: DataStreamWriter options are held
// to the keys the sink format declares plus the writer's own, as
// TBLPROPERTIES are: a misspelled key fails at Start with a "did you
// mean" hint naming the sink and the query, instead of being ignored.
func TestWriterRejectsUnknownSinkOptions(t *testing.T) {
	ctx := context.Background()
	s, mem := newTestSession(t)
	var out bytes.Buffer
	console.InstallWith(s, console.Options{Out: &out})
	memsink.Install(s, memsink.NewCatalog(), memsink.Options{})
	src := NewMemoryStream(mem, valueSchema)
	defer src.Close()
	s.RegisterStream("input", src)
	for _, tc := range []struct {
		name, format string
		opts         map[string]string
		err          string // "" when the query starts
	}{
		{"misspelled console key", "console", map[string]string{"numRow": "3"},
			"unknown option 'numRow' of the console sink of query q (did you mean 'numRows'?)"},
		{"misspelled writer key", "console", map[string]string{"outputmod": "append"},
			"unknown option 'outputmod' of the console sink of query q (did you mean 'outputMode'?)"},
		{"unknown memory key", "memory", map[string]string{"colour": "blue"},
			"unknown option 'colour' of the memory sink of query q (known: persist, "},
		{"known keys, any case", "console", map[string]string{"NUMROWS": "3", "truncate": "false", "restartPolicy": "fail"}, ""},
		{"memory keys", "memory", map[string]string{"maxRows": "10"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := s.ReadStream("input").WriteStream().Format(tc.format).QueryName("q").
				Option("checkpointLocation", t.TempDir())
			for k, v := range tc.opts {
				w.Option(k, v)
			}
			q, err := w.Start(ctx)
			if tc.err == "" {
				if err != nil {
					t.Fatalf("Start: %v", err)
				}
				q.Stop()
				return
			}
			if err == nil {
				q.Stop()
				t.Fatalf("started; want error %q", tc.err)
			}
			if !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %q; want it to contain %q", err, tc.err)
			}
		})
	}
}
