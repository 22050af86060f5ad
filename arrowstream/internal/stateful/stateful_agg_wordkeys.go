package stateful

import (
	"github.com/apache/arrow/go/v17/arrow"
)

// encodeNewKeys encodes the store keys of the groups gids (the changed
// groups whose key is not kept yet). When the live aggregation keeps its
// keys as words it writes the bytes and hashes keyCodec would give
// straight from them into l.logged.words (vector.LiveAggregate.EncodeKeys)
// and reports true: no key column is built and the generic encoder and
// Spark's hash over columns are not run, which was a seventh of a
// windowed aggregation's engine time. Otherwise it builds the groups' key
// columns and encodes them with keyCodec, and returns the columns, which
// the caller releases once it has read the keys and their partitions.
func (s *statefulAggregate) encodeNewKeys(gids []int32) (bool, []arrow.Array, error) {
	l, c := s.live, s.keyCodec
	var sparkCols []int
	if s.state.scheme == partitionMurmur3 && c.sparkHashable {
		sparkCols = c.hashKeys
		if sparkCols == nil {
			sparkCols = l.logged.allCols(len(c.cols))
		}
	}
	// Partitioned by Spark's hash (ofGroup), the encoder's hashes go
	// unread.
	l.logged.words.NoHashes = sparkCols != nil
	ok, err := l.agg.EncodeKeys(c.enc, gids, sparkCols, &l.logged.words)
	if err != nil || ok {
		return ok, nil, err
	}
	keys, err := l.agg.Keys(gids)
	if err != nil {
		return false, nil, err
	}
	if err := c.encodeCols(keys); err != nil {
		for _, a := range keys {
			a.Release()
		}
		return false, nil, err
	}
	return false, keys, nil
}

// allCols returns the positions 0…n-1 (every key column), kept.
func (s *logScratch) allCols(n int) []int {
	if len(s.every) != n {
		s.every = make([]int, n)
		for i := range s.every {
			s.every[i] = i
		}
	}
	return s.every
}
