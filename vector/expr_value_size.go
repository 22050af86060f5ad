package vector

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Values a kernel builds: a row kernel writes a row's value into a Go-heap
// scratch slice before it is copied into the result's Arrow buffer, and
// functions such as repeat or lpad make values far larger than their
// inputs (repeat('x', 50000000) is 50 MB from a 1-byte argument). Neither
// the scratch (on the Go heap) nor the result (granted by an Arrow
// allocator that cannot refuse) would be stopped by the query's memory
// limit before they were built. So a kernel whose value size is known
// before it is built (repeat: n × len; lpad/rpad: the target length;
// concat: the sum of its arguments) reports it, and its evaluator checks
// the batch's output and the largest value against the query's account
// before building anything; every row kernel's scratch is reserved on
// the account as it grows; and constant folding leaves a call whose
// value would exceed FoldValueBytes for run time without building it.

// maxValueBytes caps one string or binary value a kernel builds (repeat,
// lpad/rpad): past it the kernel fails with ErrOverflow whatever the
// memory limit, as a 2 GiB value could not be held in one batch anyway.
const maxValueBytes = 1 << 30

// valueBudget holds the reservation of one evaluation of a value-building
// kernel: its Go-heap scratch, on the query's account (when the allocator
// is a MemoryReserver).
type valueBudget struct {
	acct heapAccount
	fn   string
	step int64 // growthStep
}

func newValueBudget(mem memory.Allocator, fn string) valueBudget {
	return valueBudget{acct: newHeapAccount(mem, fn), fn: fn, step: growthStep(mem)}
}

// reserveErr wraps a refused reservation naming the function and what it
// would have built; the limit's error (RESOURCE_EXHAUSTED) stays in the
// chain.
func (b *valueBudget) reserveErr(what string, n int64, err error) error {
	return fmt.Errorf("%s: %s of %d bytes is refused: %w", b.fn, what, n, err)
}

// scratch makes the reservation cover a scratch buffer of n bytes (it
// only grows within one evaluation).
func (b *valueBudget) scratch(n int64) error {
	if n <= b.acct.held {
		return nil
	}
	if b.acct.r != nil {
		if err := b.acct.r.Reserve(n - b.acct.held); err != nil {
			return b.reserveErr("a value", n, err)
		}
	}
	b.acct.held = n
	return nil
}

// output checks that an output of n more bytes (the Arrow buffer the
// values are copied into) fits the account now, without keeping the
// reservation: the buffer itself is counted by the allocator once it is
// allocated.
func (b *valueBudget) output(n int64) error {
	if b.acct.r == nil || n <= 0 {
		return nil
	}
	if err := b.acct.r.Reserve(n); err != nil {
		return b.reserveErr("a result column", n, err)
	}
	_ = b.acct.r.Reserve(-n)
	return nil
}

// release returns the reservation.
func (b *valueBudget) release() { b.acct.release() }

// grownCap is the capacity a buffer of capacity c grows to for need bytes:
// doubled (amortized appends), but by at most step bytes past need when
// step > 0. A refused reservation fails the query on a server (the
// refusal cancels it), so a growth cannot be retried smaller: the step
// (a sixteenth of the query's limit) bounds how near the limit a value
// or column that would fit can still be refused, and keeps the copies
// of a growing buffer few (a growth of exactly need every time would copy
// it once per append). fits takes the capacity on the query's account.
func grownCap(c, need int, step int64, fits func(capBytes int) error) (int, error) {
	inc := max(c, 64)
	if step > 0 {
		inc = int(min(int64(inc), step))
	}
	n := max(c+inc, need)
	if err := fits(n); err != nil {
		return 0, err
	}
	return n, nil
}

// growthStep is the most a buffer grows past what it needs on mem's
// account: a sixteenth of the query's memory limit (at least 4 KiB), or
// 0 (doubling) when mem tells no limit.
func growthStep(mem memory.Allocator) int64 {
	l, ok := mem.(interface{ MemoryLimit() int64 })
	if !ok || l.MemoryLimit() <= 0 {
		return 0
	}
	return max(l.MemoryLimit()/16, 4<<10)
}

// valueBuf is the Go-heap scratch a row kernel of unknown size builds its
// value in (regexp_replace): it grows only through room, which reserves
// the new capacity on the query's account before it is allocated, so a
// value past the limit is refused while it is built, never after.
type valueBuf struct {
	b      []byte
	budget *valueBudget
}

// room makes room for k more bytes.
func (v *valueBuf) room(k int) error {
	need := len(v.b) + k
	if need <= cap(v.b) {
		return nil
	}
	if need > maxValueBytes || need < 0 {
		return fmt.Errorf("%s: a value over the limit of %d bytes: %w", v.budget.fn, maxValueBytes, ErrOverflow)
	}
	c, err := grownCap(cap(v.b), need, v.budget.step, func(c int) error { return v.budget.growing(int64(min(c, maxValueBytes))) })
	if err != nil {
		return err
	}
	nb := make([]byte, len(v.b), min(c, maxValueBytes))
	copy(nb, v.b)
	v.b = nb
	return nil
}

// growing is scratch for a value whose size is not known before it is
// built: the error says the value was refused as it grew.
func (b *valueBudget) growing(n int64) error {
	if n <= b.acct.held || b.acct.r == nil {
		b.acct.held = max(b.acct.held, n)
		return nil
	}
	if err := b.acct.r.Reserve(n - b.acct.held); err != nil {
		return fmt.Errorf("%s: a value growing to %d bytes is refused: %w", b.fn, n, err)
	}
	b.acct.held = n
	return nil
}

// outputRoom checks, before a result column of cap bytes holding used
// bytes grows for k more, that the growth fits the account (grownCap),
// and returns the capacity to grow to (cap when
// no growth is needed). The buffer itself is counted by the allocator
// once allocated, so nothing stays reserved.
func (b *valueBudget) outputRoom(used, capBytes, k int) (int, error) {
	need := used + k
	if need <= capBytes {
		return capBytes, nil
	}
	return grownCap(capBytes, need, b.step, func(c int) error { return b.output(int64(c - capBytes)) })
}

// foldSizer is implemented by an evaluator of constants that knows the
// size of its value before computing it, so that folding can leave a
// large constant for run time without building it.
type foldSizer interface {
	// foldBytes is the size of the constant's value in bytes, or an
	// estimate of it (meaningful only when every argument is a
	// constant). Over FoldValueBytes the call is not folded, which is
	// always correct: it is then computed at run time.
	foldBytes() int64
}

// TooLargeToFold reports whether ev, a call of constants, is known
// before it is evaluated to make a value over FoldValueBytes (repeat,
// lpad/rpad, concat, format_string), so that a planner folding
// constants leaves it for run time without building it.
func TooLargeToFold(ev Evaluator) bool { return tooLargeToFold(ev) }

func tooLargeToFold(ev Evaluator) bool {
	s, ok := ev.(foldSizer)
	return ok && s.foldBytes() > FoldValueBytes
}

// satMul multiplies non-negative sizes without overflowing.
func satMul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > (1<<62)/b {
		return 1 << 62
	}
	return a * b
}
