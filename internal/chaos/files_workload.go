package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/pebblestate"
	"github.com/arrowstream/arrowstream/arrowstream/source/files"
	"github.com/arrowstream/arrowstream/vector"
)

// filesWorkload: Records values in CSV files (value,k; about 200 files)
// read by the file source one file per epoch, projected, and written by
// the file sink (Arrow IPC files with a manifest log). The output is read
// back through the manifest, as any reader of the directory would.
type filesWorkload struct {
	records, perFile int64
}

func newFilesWorkload(records int64) *filesWorkload {
	return &filesWorkload{records: records, perFile: min(max(records/200, 50), 5000)}
}

func (w *filesWorkload) Name() string   { return "files" }
func (w *filesWorkload) Records() int64 { return w.records }

func (w *filesWorkload) numFiles() int64 { return (w.records + w.perFile - 1) / w.perFile }

var (
	filesInSchema = arrow.NewSchema([]arrow.Field{
		{Name: "value", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	filesOutSchema = arrow.NewSchema([]arrow.Field{
		{Name: "value", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "v3", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
)

// writeInput creates the input files that do not exist yet, each
// atomically (a temp name the source ignores, then a rename), so that a
// worker killed while writing them leaves whole files only.
func (w *filesWorkload) writeInput(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	for i := int64(0); i < w.numFiles(); i++ {
		name := filepath.Join(dir, fmt.Sprintf("part-%05d.csv", i))
		if _, err := os.Stat(name); err == nil {
			continue
		}
		var b strings.Builder
		for v := i * w.perFile; v < min((i+1)*w.perFile, w.records); v++ {
			b.WriteString(strconv.FormatInt(v, 10) + "," + strconv.FormatInt(v%97, 10) + "\n")
		}
		tmp := filepath.Join(dir, ".tmp-"+filepath.Base(name))
		if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
			return fmt.Errorf("chaos: %w", err)
		}
		if err := os.Rename(tmp, name); err != nil {
			return fmt.Errorf("chaos: %w", err)
		}
	}
	return nil
}

func (w *filesWorkload) Start(ctx context.Context, env Env) (Running, error) {
	input, out := filepath.Join(env.Dir, "input"), filepath.Join(env.Dir, "out")
	if err := w.writeInput(input); err != nil {
		return nil, err
	}
	sess := arrowstream.NewSession(arrowstream.SessionOptions{
		Allocator: env.Allocator, Logger: env.Logger, NoSync: env.NoSync, CheckpointHook: env.Hook,
		Conf: sessionConf(env.Conf, nil),
	})
	pebblestate.Register(sess)
	files.Install(sess)
	err := sess.RegisterSource("events", "csv", filesInSchema, map[string]string{"path": input, "maxFilesPerTrigger": "1"})
	if err != nil {
		return nil, err
	}
	q, err := sess.ReadStream("events").Select("value", "k", "value * 3 AS v3").WriteStream().
		Format("arrow").QueryName("files").Option("path", out).
		Option("checkpointLocation", filepath.Join(env.Dir, "checkpoints", "files")).Start(ctx)
	if err != nil {
		return nil, fmt.Errorf("chaos: start query files: %w", err)
	}
	return &filesRun{w: w, env: env, out: out, q: q}, nil
}

type filesRun struct {
	w   *filesWorkload
	env Env
	out string
	q   *arrowstream.StreamingQuery
}

func (r *filesRun) Done() (bool, error) {
	if !r.q.IsActive() {
		return false, fmt.Errorf("chaos: query files stopped: %w", r.q.Exception())
	}
	// One epoch per input file: count the manifest entries before reading
	// the output.
	ents, err := os.ReadDir(filepath.Join(r.out, files.ManifestDir))
	if err != nil || int64(len(ents)) < r.w.numFiles() {
		return false, nil
	}
	res, err := r.Result()
	if err != nil {
		return false, err
	}
	return res["files"].Weight() >= r.w.records, nil
}

// Result reads the sink's committed files, keyed by value.
func (r *filesRun) Result() (Result, error) {
	o, err := files.ParseOptions(files.Arrow, map[string]string{"path": r.out})
	if err != nil {
		return nil, err
	}
	src, err := files.NewSource(r.env.Allocator, filesOutSchema, o)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	op, err := src.ReadBatch(context.Background())
	if err != nil {
		return nil, fmt.Errorf("chaos: read %s: %w", r.out, err)
	}
	defer op.Close()
	recs, err := vector.Drain(context.Background(), op)
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	if err != nil {
		return nil, fmt.Errorf("chaos: read %s: %w", r.out, err)
	}
	out := Output{}
	if err := addRows(out, recs, "value", ""); err != nil {
		return nil, err
	}
	return Result{"files": out}, nil
}

func (r *filesRun) Stop() error {
	err := r.q.Stop()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
