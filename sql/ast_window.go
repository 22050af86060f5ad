package sql

// NullTreatment is IGNORE NULLS or RESPECT NULLS after a call's arguments
// (lag, lead, first_value, last_value, nth_value).
type NullTreatment uint8

// The null treatments; NullsUnspecified when the call has none.
const (
	NullsUnspecified NullTreatment = iota
	IgnoreNulls
	RespectNulls
)

// WindowSpec is the window of OVER: OVER name, OVER (name), or OVER
// ([name] [PARTITION BY ...] [ORDER BY ...] [frame]). Name refers to a
// window of the WINDOW clause that the rest refines.
type WindowSpec struct {
	Pos
	Name        *Ident
	PartitionBy []Expr
	OrderBy     []*OrderItem
	Frame       *WindowFrame // nil: the default frame
	// Bare is OVER name without parentheses.
	Bare bool
}

// FrameUnit is ROWS or RANGE.
type FrameUnit uint8

// The frame units.
const (
	FrameRows FrameUnit = iota
	FrameRange
)

func (u FrameUnit) String() string { return [...]string{"ROWS", "RANGE"}[u] }

// FrameBoundKind is the kind of a frame bound.
type FrameBoundKind uint8

// The frame bound kinds.
const (
	UnboundedPreceding FrameBoundKind = iota
	OffsetPreceding
	CurrentRow
	OffsetFollowing
	UnboundedFollowing
)

// FrameBound is one end of a frame; Offset is set for OffsetPreceding and
// OffsetFollowing.
type FrameBound struct {
	Pos
	Kind   FrameBoundKind
	Offset Expr
}

// WindowFrame is ROWS|RANGE start or ROWS|RANGE BETWEEN start AND end. The
// short form leaves End nil (it means CURRENT ROW).
type WindowFrame struct {
	Pos
	Unit       FrameUnit
	Start      *FrameBound
	End        *FrameBound
	HasBetween bool
}

// NamedWindow is name AS (spec) in a WINDOW clause.
type NamedWindow struct {
	Pos
	Name Ident
	Spec *WindowSpec
}
