package chaos

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the damage table in docs/reliability.md")

// damageQuery is the stateful query whose checkpoint the damage cases
// break: count and sum per key, Update mode as a materialized view, two
// state partitions, memory sink persisted in the checkpoint.
var damageQuery = fixtureQuery{
	name: "counts", mode: arrowstream.Update, view: true,
	build: func(s *arrowstream.Session) *arrowstream.DataFrame {
		return s.ReadStream("events").GroupBy("k").Agg("count(*) AS n", "sum(value) AS s")
	},
}

// damageKind is a checkpoint file kind and the file of the fixture
// checkpoint (12 epochs: 0..11, state version 12, snapshot at 11) that
// the cases damage: always the newest, the one a restart needs (the state
// log's only segment holds the deltas of versions 1..12).
type damageKind struct {
	kind, file string
	// csv: the fixture reads its input with the file source; file is
	// then a directory whose newest entry is damaged.
	csv bool
	// future rewrites the file as a later format version would.
	future func(t *testing.T, path string)
	// v1: the fixture checkpoint keeps its offset and commit logs in
	// Spark's v1 layout (one file per epoch), as checkpoints written
	// before the v2 epoch log do.
	v1 bool
	// snapFiles: the fixture's state partitions write their snapshots
	// into files of their own, as builds before snapshot packs did.
	snapFiles bool
	// sinkFiles: the fixture's memory sink directory holds one file per
	// epoch, as builds before the sink's log wrote it (still read).
	sinkFiles bool
}

var damageKinds = []damageKind{
	{kind: "metadata", file: "metadata", future: futureJSONVersion},
	{kind: "epoch log", file: "epochlog/0.seg", future: futureSegmentVersion},
	{kind: "offsets", file: "offsets/11", future: futureLogVersion, v1: true},
	{kind: "commits", file: "commits/11", future: futureLogVersion, v1: true},
	// A new checkpoint keeps its state records in the epoch log (the
	// "epoch log" rows damage them too); state/_log is the state log of
	// checkpoints with v1 offset and commit logs, and of those written
	// before the state records moved into the epoch log.
	{kind: "state log", file: "state/_log/1.seg", future: futureSegmentVersion, v1: true},
	// A partition's own snapshot file, as written before snapshot packs
	// (and still read); the pack holds every partition's snapshot of one
	// version (checkpoint/statestore_pack.go).
	{kind: "state snapshot", file: "state/0/0/11.snapshot", future: futureStateFormat, snapFiles: true},
	{kind: "state snapshot pack", file: "state/0/11.0.pack", future: futurePackFormat},
	// A new checkpoint in the v2 layout records the state schemas in its
	// metadata file (the "metadata" rows damage them too); the schema
	// file is Spark's v1 layout's, and that of v2 checkpoints written
	// before the metadata recorded the schemas.
	{kind: "state schema", file: "state/0/_metadata/schema", future: func(t *testing.T, p string) { appendTo(t, p, " v2") }, v1: true},
	// The memory sink appends its epochs to a log (memsink/sinklog.go);
	// "memsink file" is the per-epoch file earlier builds wrote.
	{kind: "memsink log", file: "sinks/memory/0.seg", future: futureSegmentVersion},
	{kind: "memsink file", file: "sinks/memory/11.arrow", future: futureIPCFormat("arrowstream.memsink.format"), sinkFiles: true},
	{kind: "file-source log", file: "sources/0", csv: true, future: futureLogVersion},
}

// damages in table order; each takes the kind (for its future version).
var damages = []struct {
	name  string
	apply func(t *testing.T, k damageKind, path string)
	// only: the damage applies to these kinds alone (none: every kind).
	only []string
}{
	{"truncated", func(t *testing.T, _ damageKind, p string) {
		b := readFile(t, p)
		writeFile(t, p, b[:len(b)/2])
	}, nil},
	{"flipped byte", func(t *testing.T, _ damageKind, p string) {
		b := readFile(t, p)
		b[len(b)/2] ^= 0xff
		writeFile(t, p, b)
	}, nil},
	{"missing", func(t *testing.T, _ damageKind, p string) {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}, nil},
	{"extra temp file", func(t *testing.T, _ damageKind, p string) {
		// What a write killed after its temp write leaves: a half-written
		// dot-file beside the real one.
		writeFile(t, strayTemp(p), []byte("half a file"))
	}, nil},
	{"future version", func(t *testing.T, k damageKind, p string) { k.future(t, p) }, nil},
	{"torn tail", func(t *testing.T, _ damageKind, p string) {
		// What a crash during an append leaves: part of the last record.
		b := readFile(t, p)
		writeFile(t, p, b[:len(b)-5])
	}, []string{"epoch log", "memsink log"}},
}

// strayTemp is the temp file of an interrupted write of p (another
// process's: its token, 01234567, is not this one's).
func strayTemp(p string) string {
	return filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".0123456789abcdef.tmp")
}

// The outcomes of a case.
const (
	detected  = "detected"  // restart fails with an error naming the file
	recovered = "recovered" // restart succeeds with the undamaged run's answer
	// A stray temp file recovered: the restart removed it (the query
	// holds the epoch log's lock), or left it (a v1 checkpoint has no
	// lock, and no sweep).
	tempRemoved = "recovered, temp file removed"
	tempKept    = "recovered, temp file kept"
)

// wantOutcome is the behaviour of each case (kind/damage), as documented
// in docs/reliability.md.
var wantOutcome = map[string]string{
	"metadata/truncated":       detected,
	"metadata/flipped byte":    detected,
	"metadata/missing":         recovered,
	"metadata/extra temp file": tempRemoved,
	"metadata/future version":  detected,

	"epoch log/truncated":       detected,
	"epoch log/flipped byte":    detected,
	"epoch log/missing":         detected,
	"epoch log/extra temp file": tempRemoved,
	"epoch log/future version":  detected,
	"epoch log/torn tail":       recovered,

	"offsets/truncated":       detected,
	"offsets/flipped byte":    detected,
	"offsets/missing":         detected,
	"offsets/extra temp file": tempKept,
	"offsets/future version":  detected,

	"commits/truncated":       detected,
	"commits/flipped byte":    detected,
	"commits/missing":         recovered,
	"commits/extra temp file": tempKept,
	"commits/future version":  detected,

	"state log/truncated":       detected,
	"state log/flipped byte":    detected,
	"state log/missing":         detected,
	"state log/extra temp file": tempKept,
	"state log/future version":  detected,

	"state snapshot/truncated":       recovered,
	"state snapshot/flipped byte":    recovered,
	"state snapshot/missing":         recovered,
	"state snapshot/extra temp file": tempRemoved,
	"state snapshot/future version":  detected,

	"state snapshot pack/truncated":       recovered,
	"state snapshot pack/flipped byte":    recovered,
	"state snapshot pack/missing":         recovered,
	"state snapshot pack/extra temp file": tempRemoved,
	"state snapshot pack/future version":  detected,

	"state schema/truncated":       detected,
	"state schema/flipped byte":    detected,
	"state schema/missing":         recovered,
	"state schema/extra temp file": tempKept,
	"state schema/future version":  detected,

	// A torn tail of the sink's log is cut back on recovery; here it cut
	// a committed epoch's rows, which the restart detects (the sink ends
	// before the commit log).
	"memsink log/truncated":       detected,
	"memsink log/flipped byte":    detected,
	"memsink log/missing":         detected,
	"memsink log/extra temp file": tempRemoved,
	"memsink log/future version":  detected,
	"memsink log/torn tail":       detected,

	"memsink file/truncated":       detected,
	"memsink file/flipped byte":    detected,
	"memsink file/missing":         detected,
	"memsink file/extra temp file": tempRemoved,
	"memsink file/future version":  detected,

	"file-source log/truncated":       detected,
	"file-source log/flipped byte":    detected,
	"file-source log/missing":         recovered,
	"file-source log/extra temp file": tempRemoved,
	"file-source log/future version":  detected,
}

// damageResult is one row of the documented table.
type damageResult struct {
	kind, damage, outcome, message string
}

// TestCheckpointDamage applies every damage to every file kind of a real
// checkpoint, restarts the query and checks the outcome: an error naming
// the damaged file, or the same answer as the undamaged restart. A silent
// wrong answer fails the test. The table in docs/reliability.md is this
// test's output (-update-docs rewrites it).
func TestCheckpointDamage(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	// Two fixtures: the query over the test source, and the same query over
	// CSV files read by the file source (its seen-files log).
	csvDir := t.TempDir()
	source := func(csv bool) *genSource {
		if csv {
			return &genSource{mem: mem, csvDir: csvDir, csvStep: 50}
		}
		return &genSource{mem: mem}
	}
	type fixture struct {
		pristine string
		want     []string
	}
	type variant struct{ csv, v1, snapFiles, sinkFiles bool }
	fixtures := map[variant]*fixture{}
	restart := func(v variant, dir string) ([]string, error) {
		q := damageQuery
		if v.v1 {
			q.logFormat = 1
		}
		q.snapFiles = v.snapFiles
		return runFixture(t, mem, dir, q, source(v.csv), steps(600, 50, 2))
	}
	for _, v := range []variant{{}, {csv: true}, {v1: true}, {snapFiles: true}, {sinkFiles: true}} {
		f := &fixture{pristine: t.TempDir()}
		q := damageQuery
		if v.v1 {
			q.logFormat = 1
		}
		q.snapFiles = v.snapFiles
		if _, err := runFixture(t, mem, f.pristine, q, source(v.csv), steps(0, 50, 12)); err != nil {
			t.Fatal(err)
		}
		if v.sinkFiles {
			sinkLogToFiles(t, filepath.Join(f.pristine, "sinks", "memory"))
		}
		refDir := t.TempDir()
		copyDir(t, f.pristine, refDir)
		var err error
		if f.want, err = restart(v, refDir); err != nil {
			t.Fatalf("undamaged restart: %v", err)
		}
		fixtures[v] = f
	}
	var results []damageResult
	for _, k := range damageKinds {
		v := variant{csv: k.csv, v1: k.v1, snapFiles: k.snapFiles, sinkFiles: k.sinkFiles}
		pristine, want := fixtures[v].pristine, fixtures[v].want
		for _, d := range damages {
			if d.only != nil && !slices.Contains(d.only, k.kind) {
				continue
			}
			name := k.kind + "/" + d.name
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				copyDir(t, pristine, dir)
				path := filepath.Join(dir, filepath.FromSlash(k.file))
				if k.csv {
					ents, err := os.ReadDir(path)
					if err != nil {
						t.Fatal(err)
					}
					path = filepath.Join(path, latestName(ents))
				}
				d.apply(t, k, path)
				got, err := restart(v, dir)
				res := damageResult{kind: k.kind, damage: d.name}
				switch {
				case err != nil:
					msg := strings.ReplaceAll(err.Error(), csvDir, "<input>")
					msg = strings.ReplaceAll(msg, dir+string(filepath.Separator), "")
					res.outcome, res.message = detected, strings.ReplaceAll(msg, dir, "<checkpoint>")
					// A deleted segment can only be named by its directory.
					named := strings.Contains(err.Error(), path) ||
						(k.kind == "epoch log" || k.kind == "memsink log") && d.name == "missing" && strings.Contains(err.Error(), filepath.Dir(path))
					if !named {
						t.Errorf("the error does not name %s: %v", path, err)
					}
				case slices.Equal(got, want) && d.name == "extra temp file":
					res.outcome = tempKept
					if _, err := os.Stat(strayTemp(path)); errors.Is(err, fs.ErrNotExist) {
						res.outcome = tempRemoved
					}
				case slices.Equal(got, want):
					res.outcome = recovered
				default:
					t.Fatalf("SILENT WRONG RESULT after %s:\ngot  %v\nwant %v", name, got, want)
				}
				if res.outcome != wantOutcome[name] {
					t.Errorf("%s: %s (%s), want %s", name, res.outcome, res.message, wantOutcome[name])
				}
				results = append(results, res)
			})
		}
	}
	checkDamageDoc(t, results)
}

// damageTable renders the results as the Markdown table of the docs.
func damageTable(results []damageResult) string {
	var b strings.Builder
	b.WriteString("| file kind | damage | behaviour | error (paths relative to the checkpoint) |\n|---|---|---|---|\n")
	for _, r := range results {
		// Damaged bytes may be quoted in the message: keep the table text.
		msg := strings.Map(func(r rune) rune {
			if r < ' ' || r == utf8.RuneError || r > '~' {
				return '?'
			}
			return r
		}, strings.ToValidUTF8(r.message, "?"))
		// Checksums and ids differ from run to run.
		msg = uuidRE.ReplaceAllString(msg, "<uuid>")
		msg = crcRE.ReplaceAllString(msg, "<crc>")
		if len(msg) > 160 {
			msg = msg[:157] + "..."
		}
		msg = strings.ReplaceAll(msg, "|", `\|`)
		if msg != "" {
			msg = "`" + strings.ReplaceAll(msg, "`", "'") + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.kind, r.damage, r.outcome, msg)
	}
	return b.String()
}

var (
	crcRE  = regexp.MustCompile(`\b[0-9a-f]{8}\b`)
	uuidRE = regexp.MustCompile(`"[0-9a-f?]{8}-[0-9a-f?-]{27}"`)
)

const (
	tableBegin = "<!-- damage table: generated by TestCheckpointDamage -update-docs -->\n"
	tableEnd   = "<!-- end of damage table -->\n"
)

// checkDamageDoc compares (or, with -update-docs, rewrites) the table in
// docs/reliability.md.
func checkDamageDoc(t *testing.T, results []damageResult) {
	t.Helper()
	if t.Failed() {
		return
	}
	path := filepath.Join("..", "..", "docs", "reliability.md")
	doc := string(readFile(t, path))
	i, j := strings.Index(doc, tableBegin), strings.Index(doc, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the damage table markers", path)
	}
	table := damageTable(results)
	if doc[i+len(tableBegin):j] == table {
		return
	}
	if !*updateDocs {
		t.Fatalf("the damage table in %s is out of date: run go test ./internal/chaos -run TestCheckpointDamage -update-docs\n%s", path, table)
	}
	writeFile(t, path, []byte(doc[:i+len(tableBegin)]+table+doc[j:]))
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendTo(t *testing.T, p, s string) {
	t.Helper()
	writeFile(t, p, append(readFile(t, p), s...))
}

// futureLogVersion rewrites a log entry as format v2, with a valid
// checksum.
func futureLogVersion(t *testing.T, p string) {
	b := readFile(t, p)
	cut := bytes.LastIndexByte(b, '\n')
	content := bytes.Replace(b[:cut], []byte("v1\n"), []byte("v2\n"), 1)
	sum := crc32.Checksum(content, crc32.MakeTable(crc32.Castagnoli))
	writeFile(t, p, fmt.Appendf(content, "\ncrc32c:%08x", sum))
}

// futureSegmentVersion rewrites an epoch log segment's header as format
// v3 would (the records' checksums do not cover the header).
func futureSegmentVersion(t *testing.T, p string) {
	b := readFile(t, p)
	binary.LittleEndian.PutUint32(b[4:8], 3)
	writeFile(t, p, b)
}

// futureJSONVersion adds "version":2 to a JSON object file, keeping its
// checksum trailer valid when it has one (as a newer build would write it).
func futureJSONVersion(t *testing.T, p string) {
	payload, legacy, err := checkpoint.Unseal(p, readFile(t, p))
	if err != nil {
		t.Fatal(err)
	}
	b := bytes.TrimSpace(payload)
	out := append(append(b[:len(b)-1:len(b)-1], `,"version":2`...), '}')
	if !legacy {
		out = checkpoint.Seal(out)
	}
	writeFile(t, p, out)
}

// futureStateFormat rewrites a state file of format v2 (its body starts
// "ASC2") as format v3 would start it, keeping its trailer valid.
func futureStateFormat(t *testing.T, p string) {
	raw := readFile(t, p)
	body := raw[:len(raw)-8]
	if !bytes.HasPrefix(body, []byte("ASC2")) {
		t.Fatalf("%s: not a state file of format v2", p)
	}
	body[3] = '3'
	binary.LittleEndian.PutUint32(raw[len(raw)-8:], crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	writeFile(t, p, raw)
}

// futurePackFormat rewrites a snapshot pack's footer as a later format
// would: its format byte raised, its checksum valid.
func futurePackFormat(t *testing.T, p string) {
	raw := readFile(t, p)
	n := len(raw)
	foot := raw[n-24:]
	if string(foot[20:]) != "ASPK" {
		t.Fatalf("%s: not a snapshot pack", p)
	}
	foot[12]++
	indexOff := binary.LittleEndian.Uint64(foot[:8])
	binary.LittleEndian.PutUint32(raw[n-8:], crc32.Checksum(raw[indexOff:n-8], crc32.MakeTable(crc32.Castagnoli)))
	writeFile(t, p, raw)
}

// futureIPCFormat rewrites a checksummed Arrow IPC file (state, memsink)
// with the schema metadata key set to "2", keeping its trailer's magic.
func futureIPCFormat(key string) func(t *testing.T, p string) {
	return func(t *testing.T, p string) {
		raw := readFile(t, p)
		magic := raw[len(raw)-4:]
		r, err := ipc.NewReader(bytes.NewReader(raw[:len(raw)-8]))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Release()
		md := r.Schema().Metadata()
		keys, vals := slices.Clone(md.Keys()), slices.Clone(md.Values())
		if i := md.FindKey(key); i >= 0 {
			vals[i] = "2"
		} else {
			keys, vals = append(keys, key), append(vals, "2")
		}
		nmd := arrow.NewMetadata(keys, vals)
		var buf bytes.Buffer
		w := ipc.NewWriter(&buf, ipc.WithSchema(arrow.NewSchema(r.Schema().Fields(), &nmd)), ipc.WithZstd())
		for r.Next() {
			if err := w.Write(r.Record()); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		var tr [8]byte
		binary.LittleEndian.PutUint32(tr[:4], crc32.Checksum(buf.Bytes(), crc32.MakeTable(crc32.Castagnoli)))
		copy(tr[4:], magic)
		writeFile(t, p, append(buf.Bytes(), tr[:]...))
	}
}

// sinkLogToFiles rewrites the memory sink's log segments in dir as the
// per-epoch files builds before the log wrote (each record's Arrow IPC
// stream, then its CRC-32C and "ASMS"), and removes the segments. The
// segment format is memsink/sinklog.go's: an 8-byte header, then records
// of uint64 length | uint32 CRC-32C | "ASMR" | kind byte | int64 epoch |
// IPC stream.
func sinkLogToFiles(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".seg") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		b := readFile(t, p)
		for off := 8; off < len(b); {
			n := int(binary.LittleEndian.Uint64(b[off:]))
			payload := b[off+16 : off+16+n]
			name := fmt.Sprintf("%d.arrow", int64(binary.LittleEndian.Uint64(payload[1:9])))
			if payload[0] == 'V' {
				name = fmt.Sprintf("%d.view.arrow", int64(binary.LittleEndian.Uint64(payload[1:9])))
			}
			body := payload[9:]
			raw := binary.LittleEndian.AppendUint32(slices.Clone(body), crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
			writeFile(t, filepath.Join(dir, name), append(raw, "ASMS"...))
			off += 16 + n
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
}
