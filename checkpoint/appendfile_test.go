package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// directDir returns a temporary directory whose files take O_DIRECT, or
// skips the test (a temp directory on tmpfs, another system).
func directDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "probe")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(path)
	defer f.Close()
	d, why := openDirect(f, path)
	if d == nil {
		t.Skipf("%s takes no direct writes: %s", dir, why)
	}
	d.Close()
	return dir
}

// appendSize draws an append's length: mostly small (an epoch's offsets
// and commit), often a few blocks, sometimes hundreds of KiB.
func appendSize(r *rand.Rand) int {
	switch r.Intn(6) {
	case 0:
		return r.Intn(16)
	case 1, 2:
		return r.Intn(600)
	case 3:
		return directBlock - 8 + r.Intn(16)
	case 4:
		return r.Intn(5 * directBlock)
	}
	return r.Intn(300 << 10)
}

// TestAppendFileMatchesModel appends random lengths at random memory
// alignments, reopening the file now and then, and checks after each
// append that the file is the concatenation of what was appended (the
// model), its length the model's, and that the bytes went direct or
// buffered as the writer asked: all whole blocks of an append of at
// least DirectAppendMin direct (so every direct write was aligned: a
// misaligned one is refused and would have turned the file buffered).
func TestAppendFileMatchesModel(t *testing.T) {
	dir := directDir(t)
	for _, mode := range []string{"direct", "buffered", "default"} {
		for seed := int64(1); seed <= 6; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", mode, seed), func(t *testing.T) {
				r := rand.New(rand.NewSource(seed))
				w := &Writer{NoSync: true}
				switch mode {
				case "direct":
					w.DirectAppendMin = directBlock
				case "buffered":
					w.BufferedAppends = true
				}
				path := filepath.Join(dir, fmt.Sprintf("%s-%d.seg", mode, seed))
				var a *appendFile
				// A crash between an append's writes must leave a prefix
				// of it: the whole blocks are written when the head is
				// in the file and nothing after it.
				checkOrder := func() {
					a.testDirect = func(p []byte, off int64) (int, error) {
						if size, err := a.size(); err != nil || size != off {
							t.Fatalf("direct write at %d into a file of %d bytes (%v)", off, size, err)
						}
						return a.d.WriteAt(p, off)
					}
				}
				a, err := createAppendFile(path, w)
				if err != nil {
					t.Fatal(err)
				}
				checkOrder()
				defer func() { a.Close() }()
				var model []byte
				var wantDirect, gotDirect, gotBuffered int64
				src := make([]byte, 301<<10+directBlock)
				r.Read(src)
				for step := range 120 {
					n := appendSize(r)
					start := r.Intn(directBlock + 1)
					p := src[start : start+n]
					off := int64(len(model))
					if err := a.writeAt(p, off); err != nil {
						t.Fatalf("step %d: append %d bytes at %d: %v", step, n, off, err)
					}
					model = append(model, p...)
					lo := (off + directBlock - 1) &^ (directBlock - 1)
					hi := int64(len(model)) &^ (directBlock - 1)
					if min := w.directMin(); min > 0 && hi-lo >= int64(min) {
						wantDirect += hi - lo
					}
					if size, err := a.size(); err != nil || size != int64(len(model)) {
						t.Fatalf("step %d: file holds %d bytes (%v), model %d", step, size, err, len(model))
					}
					if r.Intn(8) == 0 || step == 119 {
						got, err := os.ReadFile(path)
						if err != nil {
							t.Fatal(err)
						}
						if !bytes.Equal(got, model) {
							t.Fatalf("step %d: file differs from the model first at byte %d of %d", step, firstDiff(got, model), len(model))
						}
					}
					if r.Intn(10) == 0 {
						gotDirect += a.directBytes
						gotBuffered += a.bufferedBytes
						if err := a.Close(); err != nil {
							t.Fatal(err)
						}
						if a, err = openAppendFile(path, w); err != nil {
							t.Fatal(err)
						}
						checkOrder()
					}
				}
				gotDirect += a.directBytes
				gotBuffered += a.bufferedBytes
				if gotDirect != wantDirect || gotDirect+gotBuffered != int64(len(model)) {
					t.Fatalf("%d bytes direct and %d buffered, want %d direct of %d", gotDirect, gotBuffered, wantDirect, len(model))
				}
				if mode == "direct" && wantDirect == 0 {
					t.Fatal("the test wrote nothing direct")
				}
			})
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestAppendFileFallback: where direct writes are refused the file turns
// buffered for good and loses nothing; a direct write that fails
// otherwise, or is refused after others succeeded, fails the append, and
// appendDurably cuts what the append left.
func TestAppendFileFallback(t *testing.T) {
	dir := directDir(t)
	w := &Writer{NoSync: true, DirectAppendMin: directBlock}
	big := bytes.Repeat([]byte("0123456789abcdef"), 3*directBlock/16+5)

	t.Run("refused at the first direct write", func(t *testing.T) {
		path := filepath.Join(dir, "refused.seg")
		a, err := createAppendFile(path, w)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		calls := 0
		a.testDirect = func([]byte, int64) (int, error) {
			calls++
			return 0, &os.PathError{Op: "write", Path: path, Err: syscall.EINVAL}
		}
		model := []byte("head")
		if err := a.writeAt(model, 0); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := a.writeAt(big, int64(len(model))); err != nil {
				t.Fatalf("append after a refused direct write: %v", err)
			}
			model = append(model, big...)
		}
		got, _ := os.ReadFile(path)
		if !bytes.Equal(got, model) {
			t.Fatalf("file differs from the model at byte %d", firstDiff(got, model))
		}
		if calls != 1 || a.d != nil || a.min != 0 || a.directBytes != 0 {
			t.Fatalf("after the refusal: %d direct attempts, direct file %v, min %d, %d direct bytes; want 1, nil, 0, 0", calls, a.d, a.min, a.directBytes)
		}
	})

	for _, c := range []struct {
		name  string
		first error // the first direct write's result
		then  error // later direct writes'
	}{
		{"device error", syscall.EIO, nil},
		{"refused after a direct write", nil, syscall.EINVAL},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "fail-"+c.name+".seg")
			f, err := appendDurably(w, dir, path, nil, 0, true, []byte("head"))
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if f != nil {
					f.Close()
				}
			}()
			n := 0
			f.testDirect = func(p []byte, off int64) (int, error) {
				n++
				if err := c.first; n == 1 && err != nil {
					return 0, err
				}
				if n > 1 && c.then != nil {
					return 0, c.then
				}
				return f.d.WriteAt(p, off)
			}
			size := int64(4)
			if c.first == nil {
				if f, err = appendDurably(w, dir, path, f, size, false, big); err != nil {
					t.Fatal(err)
				}
				size += int64(len(big))
			}
			g, err := appendDurably(w, dir, path, f, size, false, big)
			if err == nil || g != nil {
				t.Fatalf("append with a failing direct write: file %v, error %v; want nil and an error", g, err)
			}
			f = nil
			if want := c.first; want == nil && !errors.Is(err, c.then) || want != nil && !errors.Is(err, want) {
				t.Fatalf("error %v does not wrap the write's", err)
			}
			if st, err := os.Stat(path); err != nil || st.Size() != size {
				t.Fatalf("after the failed append the file holds %v bytes (%v), want %d: what it wrote is cut", st.Size(), err, size)
			}
		})
	}

	t.Run("forced buffered", func(t *testing.T) {
		path := filepath.Join(dir, "forced.seg")
		a, err := createAppendFile(path, &Writer{BufferedAppends: true})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if err := a.writeAt(big, 0); err != nil {
			t.Fatal(err)
		}
		if a.d != nil || a.directBytes != 0 || a.bufferedBytes != int64(len(big)) {
			t.Fatalf("BufferedAppends wrote %d bytes direct", a.directBytes)
		}
	})
}

// TestSegmentLogDirectMatchesBuffered: the epoch log written with direct
// appends is byte for byte the one written through the page cache, and
// every prefix of its last (large, direct) append reads as a torn tail:
// ignored on open, cut by the next append, which then reads back.
func TestSegmentLogDirectMatchesBuffered(t *testing.T) {
	root := directDir(t)
	r := rand.New(rand.NewSource(7))
	type ep struct {
		offsets []byte
		state   []byte
	}
	var eps []ep
	for e := range 12 {
		st := make([]byte, appendSize(r))
		r.Read(st)
		eps = append(eps, ep{[]byte(fmt.Sprintf(`{"epoch":%d}`, e)), st})
	}
	last := make([]byte, 3*directBlock+100)
	r.Read(last)
	eps = append(eps, ep{[]byte(`{"epoch":12}`), last})

	write := func(w *Writer, name string) (dir string, sizes []int64, direct int64) {
		dir = filepath.Join(root, name)
		l, err := OpenSegmentLog(dir, w, true)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		l.SetSegmentEpochs(5)
		for e, x := range eps {
			if _, err := l.stage(kindOffsets, int64(e), x.offsets); err != nil {
				t.Fatal(err)
			}
			if _, _, _, err := l.appendState(int64(e)+1, 0, func(dst []byte) []byte { return append(dst, x.state...) }, nil); err != nil {
				t.Fatal(err)
			}
			if l.active != nil {
				direct += l.active.directBytes
			}
			sizes = append(sizes, l.segs[len(l.segs)-1].size)
		}
		direct += l.active.directBytes
		return dir, sizes, direct
	}
	bdir, bsizes, bdirect := write(&Writer{NoSync: true, BufferedAppends: true}, "buffered")
	ddir, dsizes, ddirect := write(&Writer{NoSync: true, DirectAppendMin: directBlock}, "direct")
	if bdirect != 0 || ddirect == 0 || !slices.Equal(bsizes, dsizes) {
		t.Fatalf("direct bytes: buffered log %d, direct log %d; sizes %v and %v", bdirect, ddirect, bsizes, dsizes)
	}
	names := segFilesIn(t, bdir)
	if !slices.Equal(names, segFilesIn(t, ddir)) {
		t.Fatalf("segments %v and %v", names, segFilesIn(t, ddir))
	}
	for _, n := range names {
		b, _ := os.ReadFile(filepath.Join(bdir, n))
		d, _ := os.ReadFile(filepath.Join(ddir, n))
		if !bytes.Equal(b, d) {
			t.Fatalf("segment %s: direct and buffered differ at byte %d", n, firstDiff(b, d))
		}
	}

	// Torn tails: every prefix of the last append (epoch 12's offsets
	// and state records, into segment 10).
	if !slices.Equal(names, []string{segmentName(0), segmentName(10), segmentName(5)}) {
		t.Fatalf("segments %v: want 0, 5 and 10", names)
	}
	path := filepath.Join(ddir, segmentName(10))
	whole, _ := os.ReadFile(path)
	n := len(eps)
	before := dsizes[n-2]
	mid := before + int64(len(appendRecord(nil, record{kind: kindOffsets, epoch: int64(n - 1), body: eps[n-1].offsets})))
	for cut := before; cut < int64(len(whole)); cut++ {
		dec, err := decodeSegment(path, whole[:cut])
		valid := before
		if cut >= mid {
			valid = mid
		}
		if err != nil || dec.valid != valid || (dec.torn == "") != (cut == valid) {
			t.Fatalf("prefix of %d bytes (last append from %d): valid %d, torn %q, error %v; want valid %d", cut, before, dec.valid, dec.torn, err, valid)
		}
	}
	for cut := before + 1; cut < int64(len(whole)); cut += 1 + int64(r.Intn(700)) {
		if err := os.WriteFile(path, whole[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := OpenSegmentLog(ddir, &Writer{NoSync: true, DirectAppendMin: directBlock}, false)
		if err != nil {
			t.Fatalf("cut at %d: open: %v", cut, err)
		}
		kept := whole[:before]
		if _, ok := l.get(kindOffsets, int64(n-1)); ok {
			kept = whole[:mid]
		}
		if _, _, _, err := l.appendState(int64(n), 0, func(dst []byte) []byte { return append(dst, last...) }, nil); err != nil {
			t.Fatalf("cut at %d: append after the torn tail: %v", cut, err)
		}
		if l.active == nil || l.active.directBytes == 0 {
			t.Fatalf("cut at %d: the repairing append wrote nothing direct", cut)
		}
		l.Close()
		got, _ := os.ReadFile(path)
		want := slices.Concat(kept, appendRecord(nil, record{kind: kindState, epoch: int64(n - 1), body: last}))
		if !bytes.Equal(got, want) {
			t.Fatalf("cut at %d: the segment after the repairing append differs at byte %d", cut, firstDiff(got, want))
		}
	}
}

func segFilesIn(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestEpochLogBuildsInPlace: once its write buffer is large enough, the
// epoch log builds an epoch's records where their whole blocks are
// aligned in memory, so a direct append copies nothing, whatever the
// segment's length within a block.
func TestEpochLogBuildsInPlace(t *testing.T) {
	l, err := OpenSegmentLog(filepath.Join(directDir(t), EpochLogDir), &Writer{NoSync: true, DirectAppendMin: directBlock}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	body := make([]byte, 5*directBlock)
	var copied, direct int64
	for v := int64(1); v <= 8; v++ {
		if _, err := l.stage(kindOffsets, v-1, []byte(fmt.Sprint(`{"v":`, v*v*v, "}"))); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := l.appendState(v, 0, func(dst []byte) []byte { return append(dst, body[:len(body)-int(v)*37]...) }, nil); err != nil {
			t.Fatal(err)
		}
		c, d := l.active.copiedBytes-copied, l.active.directBytes-direct
		copied, direct = l.active.copiedBytes, l.active.directBytes
		if v > 1 && (c != 0 || d == 0) {
			// (The first append grew the buffer from nothing.)
			t.Fatalf("append %d: %d bytes direct, %d of them copied to align them", v, d, c)
		}
	}
}

// TestEpochLogSizesWriteBufferFirst: a state record whose size the caller
// gives is built in a write buffer made large enough before it (not grown
// by append while it is built), so even the log's first append and those
// that outgrow the buffer write their whole blocks direct without
// copying them to align them, and the buffer is kept for the next append.
func TestEpochLogSizesWriteBufferFirst(t *testing.T) {
	l, err := OpenSegmentLog(filepath.Join(directDir(t), EpochLogDir), &Writer{NoSync: true, DirectAppendMin: directBlock}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	body := make([]byte, 256<<10)
	for i := range body {
		body[i] = byte(i * 7)
	}
	var copied, direct int64
	size := 6 * directBlock
	for v := int64(1); v <= 8; v++ {
		if _, err := l.stage(kindOffsets, v-1, []byte(fmt.Sprint(`{"v":`, v*v*v, "}"))); err != nil {
			t.Fatal(err)
		}
		n := size - int(v)*37 // at most size: the hint is a bound
		if _, _, _, err := l.appendState(v, size, func(dst []byte) []byte { return append(dst, body[:n]...) }, nil); err != nil {
			t.Fatal(err)
		}
		c, d := l.active.copiedBytes-copied, l.active.directBytes-direct
		copied, direct = l.active.copiedBytes, l.active.directBytes
		if c != 0 || d == 0 {
			t.Fatalf("append %d (%d bytes): %d bytes direct, %d of them copied to align them", v, n, d, c)
		}
		if cap(l.wbuf) < n {
			t.Fatalf("append %d (%d bytes): kept a %d-byte write buffer", v, n, cap(l.wbuf))
		}
		size += size / 3 // past the buffer's spare every other append
	}
	l.Close()
	got := readSegmentStates(t, l.dir)
	if len(got) != 8 {
		t.Fatalf("read back %d state records, want 8", len(got))
	}
	size = 6 * directBlock
	for v, b := range got {
		if n := size - (v+1)*37; !bytes.Equal(b, body[:n]) {
			t.Fatalf("state record %d: read back %d bytes, want the %d appended", v+1, len(b), n)
		}
		size += size / 3
	}
}

// readSegmentStates returns the bodies of the state records of the epoch
// log in dir, in log order.
func readSegmentStates(t *testing.T, dir string) [][]byte {
	t.Helper()
	l, err := OpenSegmentLog(dir, &Writer{NoSync: true}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	recs, err := l.stateRecords()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, r := range recs {
		out = append(out, r.body)
	}
	return out
}
