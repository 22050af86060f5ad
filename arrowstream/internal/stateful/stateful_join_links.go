package stateful

// joinLinks is the key index's link array (joinKeyIndex: by row number,
// the next row of the key's chain) kept in pages that never move: the
// first page grows by doubling up to linkPage links (16 KiB; the many
// small indexes of a join of many partitions stay small) and every page
// after it is linkPage links. A side that never evicts adds an epoch's
// rows at a time: grown as one array by doubling, every growth copied it
// whole into memory first touched in the epoch (with the dropped copies
// two to four times the links kept: Nexmark q4 and q20, session 28);
// paged, growth allocates the next page only.
type joinLinks struct {
	pages [][]int32
	n     int // links numbered 0 to n-1
}

// linkShift is log2 of a full page's links.
const linkShift = 12

const (
	linkPage = 1 << linkShift
	linkMask = linkPage - 1
)

// len is the number of links.
func (l *joinLinks) len() int { return l.n }

// at returns link g (0 <= g < len).
func (l *joinLinks) at(g int32) int32 { return l.pages[g>>linkShift][g&linkMask] }

// set sets link g (0 <= g < len) to v.
func (l *joinLinks) set(g, v int32) { l.pages[g>>linkShift][g&linkMask] = v }

// capacity is how many links fit before a page is allocated.
func (l *joinLinks) capacity() int {
	switch len(l.pages) {
	case 0:
		return 0
	case 1:
		return cap(l.pages[0])
	}
	return len(l.pages) * linkPage
}

// extend adds n links, each -1.
func (l *joinLinks) extend(n int) {
	need := l.n + n
	if len(l.pages) <= 1 && need <= linkPage {
		// One page: grown by doubling (and copied) while it is small.
		var p []int32
		if len(l.pages) == 1 {
			p = l.pages[0]
		}
		if need > cap(p) {
			grown := make([]int32, len(p), min(linkPage, max(need, 2*cap(p), 64)))
			copy(grown, p)
			p = grown
		}
		p = p[:need]
		for g := l.n; g < need; g++ {
			p[g] = -1
		}
		l.pages = append(l.pages[:0], p)
		l.n = need
		return
	}
	if len(l.pages) == 1 && cap(l.pages[0]) < linkPage {
		// The first page reaches its full size (copied once) before
		// pages are added after it.
		full := make([]int32, len(l.pages[0]), linkPage)
		copy(full, l.pages[0])
		l.pages[0] = full
	}
	for l.n < need {
		k := l.n >> linkShift
		if k == len(l.pages) {
			l.pages = append(l.pages, make([]int32, 0, linkPage))
		}
		p := l.pages[k]
		m := min(need-l.n, linkPage-len(p))
		at := len(p)
		p = p[:at+m]
		for j := at; j < len(p); j++ {
			p[j] = -1
		}
		l.pages[k] = p
		l.n += m
	}
}

// filled returns n links numbered from 0, each -1, reusing none of l's
// pages (a renumbering reads l while it fills the new links).
func filledLinks(n int) joinLinks {
	var l joinLinks
	if n > 0 {
		l.extend(n)
	}
	return l
}
