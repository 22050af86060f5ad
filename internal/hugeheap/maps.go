package hugeheap

import "bytes"

// arenaBytes is the Go runtime's heap arena size on 64-bit Linux
// (heapArenaBytes, 64 MiB): it reserves heap address space in whole
// arenas, aligned to their size, and never gives an arena back. Its
// other mappings (the arena index, the page allocator's summaries, GC
// metadata, persistentalloc chunks) are mmaps at addresses the kernel
// picks, and the binary's bss is anonymous too.
const arenaBytes = 64 << 20

// heapName is the name Go (1.25 and later, GODEBUG decoratemappings=1)
// gives its heap's mappings where the kernel supports naming anonymous
// memory (CONFIG_ANON_VMA_NAME): "[anon: Go: heap]" in the maps file.
const heapName = "[anon: Go: heap]"

// span is an address range [start, end).
type span struct{ start, end uintptr }

// mapping is one anonymous private mapping of the maps file: rw is
// whether it is read-write (memory in use) rather than PROT_NONE
// (address space reserved), heap whether the kernel names it Go's heap.
type mapping struct {
	span
	rw, heap bool
}

// heapSpans returns the read-write parts of the Go heap in a maps file's
// text. Where the kernel names Go's mappings, they are the mappings named
// heapName. Elsewhere they are found from anchors, addresses the caller
// knows to be in the heap (a live heap object's): the heap is the runs of
// contiguous anonymous private mappings (read-write, or PROT_NONE for the
// reserved rest of an arena) holding an anchor, cut to whole 64 MiB
// arenas, since the runtime reserves and maps heap memory only inside
// them. The runtime's other mappings, the bss and the C allocator's are
// left out; so is heap memory in a run no anchor is in (the runtime
// starts a new run only when the address space after the last one is
// taken).
func heapSpans(maps []byte, anchors []uintptr) []span {
	ms := parseMaps(maps)
	var out []span
	for _, m := range ms {
		if m.heap && m.rw {
			out = append(out, m.span)
		}
	}
	if len(out) > 0 {
		return out
	}
	for i := 0; i < len(ms); {
		j := i + 1
		for j < len(ms) && ms[j].start == ms[j-1].end {
			j++
		}
		run := ms[i:j]
		lo := alignUp(run[0].start, arenaBytes)
		hi := run[len(run)-1].end &^ (arenaBytes - 1)
		if lo < hi && holdsAny(lo, hi, anchors) {
			for _, m := range run {
				s, e := max(m.start, lo), min(m.end, hi)
				if m.rw && s < e {
					out = append(out, span{s, e})
				}
			}
		}
		i = j
	}
	return out
}

func alignUp(p, a uintptr) uintptr { return (p + a - 1) &^ (a - 1) }

func holdsAny(lo, hi uintptr, ps []uintptr) bool {
	for _, p := range ps {
		if lo <= p && p < hi {
			return true
		}
	}
	return false
}

// parseMaps returns the anonymous private mappings of a maps file's
// text, in its (ascending) order.
func parseMaps(maps []byte) []mapping {
	var ms []mapping
	for len(maps) > 0 {
		line := maps
		if i := bytes.IndexByte(maps, '\n'); i >= 0 {
			line, maps = maps[:i], maps[i+1:]
		} else {
			maps = nil
		}
		if m, ok := parseMapping(line); ok {
			ms = append(ms, m)
		}
	}
	return ms
}

// parseMapping parses one maps line, "start-end perms offset dev inode
// [path]", when it is an anonymous private mapping: perms "rw-p" or
// "---p", inode 0, and no path or a name the kernel gives anonymous
// memory ("[anon:…]"). [heap] (the C allocator's brk) and [stack] are
// not.
func parseMapping(line []byte) (mapping, bool) {
	var f [6][]byte
	n := 0
	for n < 6 {
		for len(line) > 0 && line[0] == ' ' {
			line = line[1:]
		}
		if len(line) == 0 {
			break
		}
		if n == 5 {
			f[5] = bytes.TrimRight(line, " ") // the path may hold spaces
			n++
			break
		}
		i := bytes.IndexByte(line, ' ')
		if i < 0 {
			i = len(line)
		}
		f[n], line = line[:i], line[i:]
		n++
	}
	if n < 5 || string(f[4]) != "0" {
		return mapping{}, false
	}
	var m mapping
	switch string(f[1]) {
	case "rw-p":
		m.rw = true
	case "---p":
	default:
		return mapping{}, false
	}
	if n == 6 {
		if !bytes.HasPrefix(f[5], []byte("[anon:")) {
			return mapping{}, false
		}
		m.heap = string(f[5]) == heapName
	}
	dash := bytes.IndexByte(f[0], '-')
	if dash < 0 {
		return mapping{}, false
	}
	s, ok1 := parseHex(f[0][:dash])
	e, ok2 := parseHex(f[0][dash+1:])
	if !ok1 || !ok2 || e <= s {
		return mapping{}, false
	}
	m.start, m.end = s, e
	return m, true
}

func parseHex(b []byte) (uintptr, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var v uintptr
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uintptr(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uintptr(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}
