package retain

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/arrowstream/arrowstream/memsink"
)

func TestProfTmp(t *testing.T) {
	if os.Getenv("PROF") == "" {
		t.Skip()
	}
	runtime.MemProfileRate = 512
	cfg := Config{Epochs: 6000, RowsPerEpoch: 20, Dir: t.TempDir(), Sink: memsink.Options{}}
	hook = func() {
		runtime.GC()
		f, _ := os.Create("/tmp/memheap.prof")
		pprof.WriteHeapProfile(f)
		f.Close()
	}
	res, err := Run(context.Background(), cfg)
	t.Logf("%+v %v", res, err)
}
