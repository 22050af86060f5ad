package vector_test

import (
	"math"
	"testing"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// refMurmur is an independent Murmur3_x86_32 written from the algorithm's
// description (block by block with explicit shifts), used to compute the
// expected values that no Spark document lists.
func refMurmur(blocks []uint32, length uint32, seed int32) int32 {
	h := uint32(seed)
	for _, k := range blocks {
		k *= 0xcc9e2d51
		k = k<<15 | k>>17
		k *= 0x1b873593
		h ^= k
		h = h<<13 | h>>19
		h = h*5 + 0xe6546b64
	}
	h ^= length
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return int32(h)
}

func refLong(v int64, seed int32) int32 {
	return refMurmur([]uint32{uint32(v), uint32(uint64(v) >> 32)}, 8, seed)
}

// refBytes follows Spark's hashUnsafeBytes: little-endian words, then one
// block per remaining (sign-extended) byte.
func refBytes(b []byte, seed int32) int32 {
	var blocks []uint32
	i := 0
	for ; i+4 <= len(b); i += 4 {
		blocks = append(blocks, uint32(b[i])|uint32(b[i+1])<<8|uint32(b[i+2])<<16|uint32(b[i+3])<<24)
	}
	for ; i < len(b); i++ {
		blocks = append(blocks, uint32(int32(int8(b[i]))))
	}
	return refMurmur(blocks, uint32(len(b)), seed)
}

func TestHashSparkValues(t *testing.T) {
	// Values from Spark's documentation: SELECT hash(1) (from the issue),
	// pyspark's hash('ABC') and hash('ABC', 'DEF'), and SQL's
	// hash('Spark', array(123), 2), whose array hashes its element in the
	// chain exactly as the int 123 does.
	s := schemaOf("c1", vector.String, "c2", vector.String)
	vt.RunExpr(t,
		vt.ExprCase{Name: "int", Schema: s, Rows: []vt.Row{{"x", "y"}}, Expr: vector.Hash(vector.Lit(1)), Want: []any{-559580957}, WantType: vector.Int32},
		vt.ExprCase{Name: "ABC", Schema: s, Rows: []vt.Row{{"ABC", "DEF"}}, Expr: vector.Hash(vector.Col("c1")), Want: []any{-757602832}},
		vt.ExprCase{Name: "ABC-DEF", Schema: s, Rows: []vt.Row{{"ABC", "DEF"}, {"ABC", "DEF"}}, Expr: vector.Hash(vector.Col("c1"), vector.Col("c2")), Want: []any{599895104, 599895104}},
		vt.ExprCase{Name: "dictionary", Schema: schemaOf("c1", dictString), Rows: column("ABC", "ABC"), Expr: vector.Hash(vector.Col("c1")), Want: []any{-757602832, -757602832}},
		vt.ExprCase{Name: "Spark-123-2", Schema: s, Rows: []vt.Row{{"Spark", nil}}, Expr: vector.Hash(vector.Col("c1"), vector.Lit(123), vector.Lit(2)), Want: []any{-1321691492}},
		vt.ExprCase{Name: "null-skipped", Schema: s, Rows: []vt.Row{{"ABC", nil}}, Expr: vector.Hash(vector.Col("c1"), vector.Col("c2")), Want: []any{-757602832}},
		vt.ExprCase{Name: "all-null", Schema: s, Rows: []vt.Row{{nil, nil}}, Expr: vector.Hash(vector.Col("c1"), vector.Col("c2")), Want: []any{42}},
	)
}

func TestHashTypes(t *testing.T) {
	s := schemaOf("l", vector.Int64, "d", vector.Float64, "b", vector.Boolean, "ts", vector.Timestamp, "dt", vector.Date,
		"dec", vector.Decimal(10, 2), "wide", vector.Decimal(30, 0), "bin", vector.Binary)
	rows := []vt.Row{
		{int64(-5), 1.5, true, int64(1_700_000_000_000_000), int64(20000), "123.45", "-123456789012345678901234", []byte("hello")},
		{int64(0), math.Copysign(0, -1), false, int64(-1), int64(-1), "0.01", "128", []byte("ab")},
	}
	want := func(i int) []any {
		r := rows[i]
		// -0.0 hashes as 0.0; doubles hash their bits as a long.
		d := r[1].(float64)
		dbits := int64(math.Float64bits(d))
		if d == 0 {
			dbits = 0
		}
		boolInt := int32(0)
		if r[2].(bool) {
			boolInt = 1
		}
		decUnscaled := map[string]int64{"123.45": 12345, "0.01": 1}[r[5].(string)]
		wideBytes := map[string][]byte{
			// BigInteger.toByteArray (minimal two's complement).
			"-123456789012345678901234": {0xe5, 0xdb, 0x64, 0xe0, 0xef, 0x5f, 0x93, 0x69, 0x50, 0x0e},
			"128":                       {0x00, 0x80},
		}[r[6].(string)]
		return []any{
			refLong(r[0].(int64), 42),
			refLong(dbits, 42),
			refMurmur([]uint32{uint32(boolInt)}, 4, 42),
			refLong(r[3].(int64), 42),
			refMurmur([]uint32{uint32(int32(r[4].(int64)))}, 4, 42),
			refLong(decUnscaled, 42),
			refBytes(wideBytes, 42),
			refBytes(r[7].([]byte), 42),
		}
	}
	cols := []string{"l", "d", "b", "ts", "dt", "dec", "wide", "bin"}
	var cases []vt.ExprCase
	for c, name := range cols {
		cases = append(cases, vt.ExprCase{Name: name, Schema: s, Rows: rows, Expr: vector.Hash(vector.Col(name)),
			Want: []any{want(0)[c], want(1)[c]}})
	}
	vt.RunExpr(t, cases...)
	// Chaining: the first hash seeds the second.
	chained := refLong(dbitsOf(1.5), refLong(-5, 42))
	vt.RunExpr(t, vt.ExprCase{Name: "chain", Schema: s, Rows: rows[:1], Expr: vector.Hash(vector.Col("l"), vector.Col("d")), Want: []any{chained}})
	// Strings with 1 to 7 bytes exercise the tail handling.
	str := schemaOf("s", vector.String)
	for _, v := range []string{"", "a", "ab", "abc", "abcd", "abcde", "héllo!!", "\xff\xfe"} {
		vt.RunExpr(t, vt.ExprCase{Name: "string-" + v, Schema: str, Rows: column(v), Expr: vector.Hash(vector.Col("s")), Want: []any{refBytes([]byte(v), 42)}})
	}
}

func dbitsOf(f float64) int64 { return int64(math.Float64bits(f)) }

func TestHashBindErrors(t *testing.T) {
	s := schemaOf("w", vector.WindowType)
	vt.RunExpr(t,
		vt.ExprCase{Name: "no-args", Schema: s, Rows: []vt.Row{{nil}}, Expr: vector.Hash(), WantErr: "cannot bind hash(): hash requires at least one argument"},
		vt.ExprCase{Name: "struct", Schema: s, Rows: []vt.Row{{nil}}, Expr: vector.Hash(vector.Col("w")), WantErr: "cannot bind hash(w): w must be of an atomic type, not struct"},
	)
}
