package conformance

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/streamtest"
)

// DefaultShufflePartitions is the number of state partitions a scenario
// runs with unless it (or Runner.Conf) says otherwise (Spark's test
// sessions use 5).
const DefaultShufflePartitions = "5"

// Runner runs scenarios and reports one line per scenario.
type Runner struct {
	// Out receives the report (default os.Stdout).
	Out io.Writer
	// Verbose prints every step of every run, and the fixture's dump on a
	// failure.
	Verbose bool
	// Run selects scenarios by name (nil: all).
	Run *regexp.Regexp
	// Conf sets a session setting for every scenario; a scenario's own
	// options override it.
	Conf map[string]string
	// RestartAfterChecks stops and restarts the query after every epoch
	// of a stateful scenario (before the first add that follows a check),
	// which must not change any answer.
	RestartAfterChecks bool
	// StepTimeout bounds each wait (default streamtest.DefaultStepTimeout).
	StepTimeout time.Duration
	// TempDir is where checkpoints are made (default os.TempDir()).
	TempDir string
	// CheckOutputTypes also requires, after every check that passed, the
	// sink's columns to match the scenario's `output` in number and type.
	// FORMAT.md compares rows by value only (2 equals 2.0), so this is
	// stricter than the format; the project's own tests turn it on.
	CheckOutputTypes bool
}

// Status is the outcome of a scenario.
type Status int

const (
	// Passed: every run of the scenario passed.
	Passed Status = iota
	// Failed: some run failed.
	Failed
	// Skipped: the scenario needs something the engine does not support.
	Skipped
	// RestartDependent: with RestartAfterChecks, the answers changed, the
	// query falls under the rule of restartDependentBySpec (two or more
	// watermarked inputs, min policy: docs/semantics.md §3.2), and the final sink
	// contents after a flush match the uninterrupted run's; neither
	// passed nor failed.
	RestartDependent
)

func (s Status) String() string {
	switch s {
	case Failed:
		return "FAIL"
	case Skipped:
		return "SKIP"
	case RestartDependent:
		return "SPEC"
	}
	return "PASS"
}

// Result is the outcome of one scenario.
type Result struct {
	Name   string
	Status Status
	// Detail is the reason of a skip or the first difference of a failure
	// (one line, naming the run and the step index).
	Detail string
	// Variants are the runs made: "plan", "sql" or "sink".
	Variants []string
	// Stateful is set when the scenario's query keeps state.
	Stateful bool
	// WatermarkedInputs counts the watermarked inputs of the query.
	WatermarkedInputs int
}

// Summary counts results.
type Summary struct {
	Passed, Failed, Skipped int
	// RestartDependent counts the scenarios whose answers may change with
	// restarts by the spec (see Status RestartDependent).
	RestartDependent int
	Results          []Result
}

func (s Summary) String() string {
	line := fmt.Sprintf("%d passed, %d failed", s.Passed, s.Failed)
	if s.RestartDependent > 0 {
		line += fmt.Sprintf(", %d %s", s.RestartDependent, RestartDependentDetail)
	}
	if s.Skipped > 0 {
		line += fmt.Sprintf(", %d skipped", s.Skipped)
	}
	return line
}

// RunAll runs the selected scenarios in order, printing a line per
// scenario and the summary line.
func (r *Runner) RunAll(scenarios []*Scenario) Summary {
	out := r.out()
	var sum Summary
	for _, sc := range scenarios {
		if r.Run != nil && !r.Run.MatchString(sc.Name) {
			continue
		}
		res := r.RunScenario(sc)
		sum.Results = append(sum.Results, res)
		switch res.Status {
		case Passed:
			sum.Passed++
			fmt.Fprintf(out, "PASS %s\n", res.Name)
		case Failed:
			sum.Failed++
			fmt.Fprintf(out, "FAIL %s: %s\n", res.Name, res.Detail)
		case Skipped:
			sum.Skipped++
			fmt.Fprintf(out, "SKIP %s: %s\n", res.Name, res.Detail)
		case RestartDependent:
			sum.RestartDependent++
			fmt.Fprintf(out, "SPEC %s: %s\n", res.Name, res.Detail)
		}
	}
	fmt.Fprintln(out, sum)
	return sum
}

func (r *Runner) out() io.Writer {
	if r.Out == nil {
		return os.Stdout
	}
	return r.Out
}

func (r *Runner) logf(format string, args ...any) {
	if r.Verbose {
		fmt.Fprintf(r.out(), format, args...)
	}
}

// RunScenario runs a scenario: with its plan and with its SQL when it has
// both, once when it has no query.
func (r *Runner) RunScenario(sc *Scenario) Result {
	res := Result{Name: sc.Name}
	if why := Unsupported(sc); why != "" {
		res.Status, res.Detail = Skipped, why
		return res
	}
	var variants []string
	switch {
	case sc.Query == nil:
		variants = []string{"sink"}
	default:
		if len(sc.Query.Plan) > 0 {
			variants = append(variants, "plan")
		}
		if sc.Query.SQL != "" {
			variants = append(variants, "sql")
		}
	}
	res.Variants = variants
	for _, v := range variants {
		if v == "plan" {
			r.logf("=== %s [plan: %s]\n", sc.Name, describeOps(sc.Query.Plan))
		} else {
			r.logf("=== %s [%s]\n", sc.Name, v)
		}
		out := r.runVariant(sc, v, runMode{restart: r.RestartAfterChecks})
		res.Stateful = res.Stateful || out.stateful
		res.WatermarkedInputs = max(res.WatermarkedInputs, out.watermarked)
		switch {
		case out.skip != "":
			res.Status, res.Detail = Skipped, out.skip
			return res
		case out.err != nil && r.RestartAfterChecks && out.bySpec:
			// Not a failure by itself: the rule allows later answers, as
			// long as the uninterrupted run passes and the eventual
			// answers are the same.
			if plain := r.runVariant(sc, v, runMode{}); plain.err != nil {
				res.Status = Failed
				res.Detail = fmt.Sprintf("[%s] %s (also without restarts)", v, firstLine(plain.err.Error()))
				return res
			}
			how, why := r.eventualAnswersMatch(sc, v)
			if why != "" {
				res.Status = Failed
				res.Detail = fmt.Sprintf("[%s] %s; %s", v, firstLine(out.err.Error()), why)
				return res
			}
			res.Status = RestartDependent
			res.Detail = fmt.Sprintf("%s: %d watermarked inputs under the min policy; [%s] %s; %s",
				RestartDependentDetail, out.watermarked, v, firstLine(out.err.Error()), how)
		case out.err != nil:
			res.Status = Failed
			res.Detail = fmt.Sprintf("[%s] %s", v, firstLine(out.err.Error()))
			r.logf("%v\n", out.err)
			return res
		}
	}
	return res
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// variantOutcome is the outcome of one run of a scenario.
type variantOutcome struct {
	err         error
	skip        string
	stateful    bool
	watermarked int  // watermarked inputs of the query
	bySpec      bool // restartDependentBySpec holds for the query
	final       []streamtest.Row
}

// runMode says how a variant runs: with a restart after every epoch of a
// stateful query; eventual: checks and assertions only let the query catch
// up, and a flush epoch ends the run, whose final sink content is kept;
// allAtOnce: no steps but one epoch of every added row and the flush rows
// (the answer with nothing late and nothing evicted early).
type runMode struct{ restart, eventual, allAtOnce bool }

// runVariant runs the scenario once with the plan, the SQL or (no query)
// the sink alone, on a fresh fixture.
func (r *Runner) runVariant(sc *Scenario, variant string, mode runMode) (out variantOutcome) {
	steps := make([]*step, len(sc.Steps))
	for i, st := range sc.Steps {
		s, err := decodeStep(sc, st)
		if err != nil {
			out.err = fmt.Errorf("step %d (%s): %w", i, st.Action, err)
			return out
		}
		steps[i] = s
	}
	dir, err := os.MkdirTemp(r.TempDir, "conformance-")
	if err != nil {
		out.err = err
		return out
	}
	defer os.RemoveAll(dir)
	mem := poisonmem.New()
	fix, sources, err := r.fixture(sc, variant, dir, mem)
	if err != nil {
		out.err = err
		return out
	}
	defer func() {
		if cerr := fix.Close(); cerr != nil && out.err == nil && out.skip == "" {
			out.err = fmt.Errorf("close: %w", cerr)
		}
		if n := mem.CurrentAlloc(); n != 0 && out.err == nil && out.skip == "" {
			out.err = fmt.Errorf("leak: %d bytes of Arrow memory still allocated after the scenario", n)
		}
	}()
	if sc.Query != nil {
		// The analyzed plan decides what the engine cannot run yet and
		// whether the query keeps state.
		df := r.query(sc, variant)(fix.Session())
		if df.Err() == nil {
			if why := unsupportedPlan(df.Plan()); why != "" {
				out.skip = why
				return out
			}
			out.stateful = statefulPlan(df.Plan())
			out.watermarked = watermarkedInputs(df.Plan())
			out.bySpec = r.restartDependentBySpec(sc, df.Plan())
		}
	}
	if mode.allAtOnce {
		out.final, out.err = r.allAtOnce(sc, fix, sources, steps)
		return out
	}
	restartPending := false
	for i := 0; i < len(steps); i++ {
		s := steps[i]
		if mode.restart && out.stateful {
			switch s.kind {
			case "check":
				restartPending = true
			case "add", "multi_add", "fail_next_epoch":
				if restartPending && canRestart(fix) {
					r.logf("  (restart)\n")
					if err := fix.Do(streamtest.RestartKeepingMetrics()); err != nil {
						out.err = fmt.Errorf("step %d (restart before %s): %w\n%s", i, s.kind, err, fix.Dump())
						return out
					}
				}
				restartPending = false
			case "start", "stop", "restart", "expect_failure", "await_termination":
				restartPending = false
			}
		}
		actions := s.actions(sources)
		if mode.eventual && lenientKinds[s.kind] {
			actions = []streamtest.Action{streamtest.ProcessAllAvailable()}
		}
		for _, a := range actions {
			start := time.Now()
			err := fix.Do(a)
			r.logf("  step %d %s: %s (%s)\n", i, a, okOrFail(err), time.Since(start).Round(time.Millisecond))
			if j := runtimeFailureAfter(steps, i); err != nil && j > 0 && errors.As(err, new(*streamtest.StartRefusedError)) {
				// The engine refused at start a query that Spark runs
				// until it fails (SEMANTICS.md lets such a check run at
				// analysis): the failure the scenario expects came
				// sooner, before any of its rows were read.
				r.logf("  steps %d-%d: the start was refused (%v), which meets step %d's expected runtime failure\n", i+1, j, err, j)
				i = j
				break
			}
			if err == nil && s.kind == "check" && r.CheckOutputTypes {
				err = checkSinkTypes(sc, fix)
			}
			if err != nil {
				out.err = fmt.Errorf("step %d (%s): %w\n%s", i, s.kind, err, fix.Dump())
				return out
			}
		}
	}
	if mode.eventual {
		out.final, out.err = r.flush(sc, fix, sources, mode.restart)
	}
	return out
}

// allAtOnce starts the query and adds every row of the scenario's adds
// and the flush rows in one epoch; it returns the sink's content once the
// query caught up.
func (r *Runner) allAtOnce(sc *Scenario, fix *streamtest.Stream, sources map[string]*streamtest.Source, steps []*step) ([]streamtest.Row, error) {
	if err := fix.Do(streamtest.StartStream(arrowstream.ProcessingTime(0), false)); err != nil {
		return nil, err
	}
	var adds []sourceRows
	for _, s := range steps {
		if s.kind == "add" || s.kind == "multi_add" {
			adds = append(adds, s.adds...)
		}
	}
	flush, err := flushRows(sc)
	if err != nil {
		return nil, fmt.Errorf("flush rows: %w", err)
	}
	adds = append(adds, flush...)
	sr := make([]streamtest.SourceRows, len(adds))
	for i, a := range adds {
		sr[i] = streamtest.SourceRows{Source: sources[a.source], Rows: a.rows}
	}
	if err := fix.Do(streamtest.MultiAddData(sr...)); err != nil {
		return nil, err
	}
	return fix.SinkAnswer()
}

// flush ends an eventual run: a restart (in restart mode), flushRows on
// every source, and the sink's whole content once the query caught up.
func (r *Runner) flush(sc *Scenario, fix *streamtest.Stream, sources map[string]*streamtest.Source, restart bool) ([]streamtest.Row, error) {
	if fix.Query() == nil || !fix.Query().IsActive() {
		return nil, fmt.Errorf("the query is not running at the end of the scenario")
	}
	if restart && canRestart(fix) {
		if err := fix.Do(streamtest.RestartKeepingMetrics()); err != nil {
			return nil, fmt.Errorf("restart before the flush: %w", err)
		}
	}
	adds, err := flushRows(sc)
	if err != nil {
		return nil, fmt.Errorf("flush rows: %w", err)
	}
	sr := make([]streamtest.SourceRows, len(adds))
	for i, a := range adds {
		sr[i] = streamtest.SourceRows{Source: sources[a.source], Rows: a.rows}
	}
	// The flush epoch's watermark applies from the next epoch on; without
	// no-data epochs only a second data epoch (after the first has run)
	// evicts and emits with it.
	times := 1
	if !r.noDataBatches(sc) {
		times = 2
	}
	for i := 0; i < times; i++ {
		if err := fix.Do(streamtest.MultiAddData(sr...)); err != nil {
			return nil, fmt.Errorf("flush: %w", err)
		}
		if err := fix.Do(streamtest.ProcessAllAvailable()); err != nil {
			return nil, fmt.Errorf("flush: %w", err)
		}
	}
	return fix.SinkAnswer()
}

// noDataBatches reports whether the scenario runs no-data epochs (the
// default) given the runner's and the query's settings.
func (r *Runner) noDataBatches(sc *Scenario) bool {
	const key = "spark.sql.streaming.noDataMicroBatches.enabled"
	v := r.Conf[key]
	if sc.Query != nil {
		if qc, err := queryConf(sc.Query.Options); err == nil {
			if qv, ok := qc[key]; ok {
				v = qv
			}
		}
	}
	return !strings.EqualFold(strings.TrimSpace(v), "false")
}

func okOrFail(err error) string {
	if err != nil {
		return "FAIL"
	}
	return "ok"
}

// canRestart reports whether the restart-equivalence mode may restart the
// query now: it runs with the default trigger on the system clock.
func canRestart(fix *streamtest.Stream) bool {
	q := fix.Query()
	return q != nil && q.IsActive() && !fix.UsesManualClock() && fix.Trigger() == arrowstream.ProcessingTime(0)
}

// fixture makes the scenario's fixture: sources, static tables, sink and
// query (by variant), with the session settings.
func (r *Runner) fixture(sc *Scenario, variant, dir string, mem memory.Allocator) (*streamtest.Stream, map[string]*streamtest.Source, error) {
	conf := map[string]string{arrowstream.ConfShufflePartitions: DefaultShufflePartitions}
	for k, v := range r.Conf {
		conf[k] = v
	}
	opts := streamtest.Options{Dir: dir, Allocator: mem, Conf: conf, QueryName: "conformance", StepTimeout: r.StepTimeout}
	if sc.Query != nil {
		qc, err := queryConf(sc.Query.Options)
		if err != nil {
			return nil, nil, err
		}
		for k, v := range qc {
			conf[k] = v
		}
		if opts.OutputMode, err = parseOutputMode(sc.Query.OutputMode); err != nil {
			return nil, nil, err
		}
		opts.Query = r.query(sc, variant)
	} else {
		schema, err := schemaOf(sc.SinkColumns)
		if err != nil {
			return nil, nil, fmt.Errorf("sink_columns: %w", err)
		}
		opts.SinkSchema = schema
		opts.SinkMode = arrowstream.Append
		for _, st := range sc.Steps {
			var trunc bool
			if st.Action == "sink_write" && decodeJSON(st.Fields["truncate"], &trunc) == nil && trunc {
				opts.SinkMode = arrowstream.Complete
			}
		}
	}
	fix, err := streamtest.New(opts)
	if err != nil {
		return nil, nil, err
	}
	sources := map[string]*streamtest.Source{}
	for _, name := range sortedKeys(sc.Sources) {
		schema, err := schemaOf(sc.Sources[name])
		if err == nil {
			sources[name], err = fix.AddSource(name, schema)
		}
		if err != nil {
			fix.Close()
			return nil, nil, fmt.Errorf("source %s: %w", name, err)
		}
	}
	for _, name := range sortedKeys(sc.Static) {
		t := sc.Static[name]
		schema, err := schemaOf(t.Columns)
		var rows []streamtest.Row
		if err == nil {
			rows, err = convertRows(t.Columns, t.Rows)
		}
		if err == nil {
			err = fix.AddTable(name, schema, rows...)
		}
		if err != nil {
			fix.Close()
			return nil, nil, fmt.Errorf("static table %s: %w", name, err)
		}
	}
	return fix, sources, nil
}

// query returns the builder of the scenario's query for a variant.
func (r *Runner) query(sc *Scenario, variant string) func(*arrowstream.Session) *arrowstream.DataFrame {
	if variant == "sql" {
		return func(sess *arrowstream.Session) *arrowstream.DataFrame { return sess.SQLDataFrame(sc.Query.SQL) }
	}
	return func(sess *arrowstream.Session) *arrowstream.DataFrame { return buildPlan(sess, sc.Query.Plan) }
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// runtimeFailureAfter returns the index of the runtime expect_failure that
// follows the start at steps[i] with only input, waits and comments
// between them (no check: a query that answered before it failed is not
// one a refusal at start can stand for), or 0.
func runtimeFailureAfter(steps []*step, i int) int {
	if steps[i].kind != "start" {
		return 0
	}
	for j := i + 1; j < len(steps); j++ {
		switch steps[j].kind {
		case "add", "multi_add", "process_all_available", "advance_clock", "comment":
			continue
		case "expect_failure":
			if steps[j].phase == streamtest.RuntimePhase {
				return j
			}
		}
		return 0
	}
	return 0
}
