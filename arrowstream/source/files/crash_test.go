package files

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// The crash test runs files → Parquet file sink in a child process (this
// test binary, re-executed), SIGKILLs it at random moments, adds input
// files between runs, and finally lets a run finish. Read back through the
// manifest, the output must hold every input row exactly once, and no
// file outside the manifest may be visible.

const (
	crashEnvDir = "ARROWSTREAM_FILES_CRASH_DIR"
	crashRows   = 20 // rows per input file
	crashKills  = 20
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashEnvDir); dir != "" {
		os.Exit(crashChild(dir))
	}
	os.Exit(m.Run())
}

func writeCrashInput(dir string, n int) error {
	var b strings.Builder
	for i := 0; i < crashRows; i++ {
		fmt.Fprintf(&b, "%d,f%d\n", n*crashRows+i, n)
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".in-%04d.tmp", n))
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return err
	}
	// Files appear whole (renamed into place), as a file source expects.
	return os.Rename(tmp, filepath.Join(dir, fmt.Sprintf("in-%04d.csv", n)))
}

// crashChild runs the query until the manifest holds every input row.
func crashChild(dir string) int {
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	ents, _ := os.ReadDir(in)
	want := int64(len(ents)) * crashRows
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: poisonmem.New(),
		Conf: map[string]string{arrowstream.ConfShufflePartitions: "2"}})
	Install(s)
	q, err := s.ReadStreamFormat("csv").Schema(testSchema).Option("maxFilesPerTrigger", "2").Load(in).
		WriteStream().Format("parquet").Option("path", out).Option("maxRecordsPerFile", "15").
		Option("checkpointLocation", filepath.Join(dir, "checkpoint")).
		Trigger(arrowstream.ProcessingTime(time.Millisecond)).Start(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	for {
		if manifestRows(out) >= want {
			q.Stop()
			return 0
		}
		if !q.IsActive() {
			fmt.Fprintln(os.Stderr, q.Exception())
			return 3
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// manifestRows counts the rows of the committed manifest entries.
func manifestRows(out string) int64 {
	log, err := checkpoint.OpenLog(filepath.Join(out, ManifestDir), &checkpoint.Writer{NoSync: true})
	if err != nil {
		return -1
	}
	epochs, err := log.Epochs()
	if err != nil {
		return -1
	}
	var n int64
	for _, e := range epochs {
		body, _, err := log.Get(e)
		if err != nil {
			return -1
		}
		files, err := decodeManifest(out, body)
		if err != nil {
			return -1
		}
		for _, f := range files {
			n += f.Rows
		}
	}
	return n
}

func TestCrashLoopFilesToFileSink(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess crash loop")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	nFiles := 0
	for ; nFiles < 10; nFiles++ {
		if err := writeCrashInput(in, nFiles); err != nil {
			t.Fatal(err)
		}
	}
	r := rand.New(rand.NewSource(42))
	for killed := 0; ; {
		child, err := testutil.StartChild(exe, crashEnvDir+"="+dir)
		if err != nil {
			t.Fatal(err)
		}
		if killed < crashKills {
			select {
			case err := <-child.Done():
				if err != nil {
					t.Fatalf("child failed: %v\n%s", err, child.Stderr)
				}
			case <-time.After(time.Duration(30+r.Intn(200)) * time.Millisecond):
				child.Kill()
				killed++
			}
			// New data arrives while the query is down.
			if err := writeCrashInput(in, nFiles); err != nil {
				t.Fatal(err)
			}
			nFiles++
			continue
		}
		// No time limit: only a child that stops writing (and logging)
		// for testutil.DefaultStall fails.
		if err := child.Wait(testutil.TreeProgress(dir), 0); err != nil {
			t.Fatalf("final child failed: %v\n%s", err, child.Stderr)
		}
		break
	}
	out := filepath.Join(dir, "out")
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	o, _ := ParseOptions(Parquet, map[string]string{"path": out})
	src, err := NewSource(mem, testSchema, o)
	if err != nil {
		t.Fatal(err)
	}
	op, err := src.ReadBatch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rows, err := drain(t, op)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(rows))
	for i, row := range rows {
		ids[i] = row[0].(int64)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	checkExactlyOnce(t, "file sink after crashes", ids, nFiles*crashRows)
	// Nothing visible beyond the manifest: an interrupted epoch's files
	// were replaced when it ran again.
	committed, _, _ := readManifest(out)
	visible, _ := os.ReadDir(out)
	var parts int
	for _, e := range visible {
		if !hidden(e.Name()) {
			parts++
		}
	}
	if parts != len(committed) {
		t.Fatalf("%d visible part files, %d in the manifest", parts, len(committed))
	}
}
