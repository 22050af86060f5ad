package kafka_test

import (
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
)

func TestParseSourceOptions(t *testing.T) {
	base := func(kv ...string) map[string]string {
		m := map[string]string{"kafka.bootstrap.servers": "127.0.0.1:9092"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		name  string
		opts  map[string]string
		err   string // substring of the error; "" means valid
		check func(t *testing.T, o kafka.SourceOptions)
	}{
		{"subscribe defaults", base("subscribe", "b, a"), "", func(t *testing.T, o kafka.SourceOptions) {
			if strings.Join(o.Subscribe, ",") != "a,b" || o.StartingOffsets.Kind != "latest" || !o.FailOnDataLoss || o.PollTimeout != 120*time.Second || o.IncludeHeaders {
				t.Fatalf("%+v", o)
			}
		}},
		{"pattern matches whole names", base("subscribePattern", "ev.*"), "", func(t *testing.T, o kafka.SourceOptions) {
			if !o.SubscribePattern.MatchString("events") || o.SubscribePattern.MatchString("xevents") {
				t.Fatal("pattern must match whole topic names")
			}
		}},
		{"assign", base("assign", `{"t":[1,0]}`, "startingOffsets", `{"t":{"0":-2,"1":5}}`, "endingOffsets", `{"t":{"0":-1,"1":9}}`), "", func(t *testing.T, o kafka.SourceOptions) {
			if len(o.Assign["t"]) != 2 || o.Assign["t"][0] != 0 || o.StartingOffsets.Offsets["t"][1] != 5 || o.EndingOffsets.Offsets["t"][1] != 9 {
				t.Fatalf("%+v", o)
			}
		}},
		{"case-insensitive keys and values", base("SUBSCRIBE", "t", "StartingOffsets", "EARLIEST", "FAILONDATALOSS", "false", "includeHeaders", "true", "maxOffsetsPerTrigger", "10", "minPartitions", "4"), "", func(t *testing.T, o kafka.SourceOptions) {
			if o.StartingOffsets.Kind != "earliest" || o.FailOnDataLoss || !o.IncludeHeaders || o.MaxOffsetsPerTrigger != 10 {
				t.Fatalf("%+v", o)
			}
		}},
		{"no servers", map[string]string{"subscribe": "t"}, "kafka.bootstrap.servers must be specified", nil},
		{"no strategy", base(), "exactly one of the options subscribe, subscribePattern and assign", nil},
		{"two strategies", base("subscribe", "t", "assign", `{"t":[0]}`), "exactly one of the options", nil},
		{"empty subscribe", base("subscribe", " , "), "option subscribe", nil},
		{"bad pattern", base("subscribePattern", "(("), "option subscribePattern", nil},
		{"bad assign json", base("assign", `{"t":0}`), "option assign", nil},
		{"negative assign", base("assign", `{"t":[-1]}`), "option assign", nil},
		{"bad starting", base("subscribe", "t", "startingOffsets", "yesterday"), "option startingOffsets", nil},
		{"bad starting partition", base("subscribe", "t", "startingOffsets", `{"t":{"x":1}}`), "option startingOffsets", nil},
		{"starting offset below -2", base("subscribe", "t", "startingOffsets", `{"t":{"0":-3}}`), "option startingOffsets", nil},
		{"earliest ending", base("subscribe", "t", "endingOffsets", "earliest"), "option endingOffsets", nil},
		{"-2 ending", base("subscribe", "t", "endingOffsets", `{"t":{"0":-2}}`), "option endingOffsets", nil},
		{"trailing json", base("subscribe", "t", "startingOffsets", `{"t":{"0":1}} x`), "option startingOffsets", nil},
		{"bad max offsets", base("subscribe", "t", "maxOffsetsPerTrigger", "0"), "option maxOffsetsPerTrigger", nil},
		{"min offsets and delay", base("subscribe", "t", "minOffsetsPerTrigger", "500", "maxTriggerDelay", "30s"), "", func(t *testing.T, o kafka.SourceOptions) {
			if o.MinOffsetsPerTrigger != 500 || o.MaxTriggerDelay != 30*time.Second {
				t.Fatalf("%+v", o)
			}
		}},
		{"delay in milliseconds", base("subscribe", "t", "minOffsetsPerTrigger", "5", "maxTriggerDelay", "250"), "", func(t *testing.T, o kafka.SourceOptions) {
			if o.MaxTriggerDelay != 250*time.Millisecond {
				t.Fatalf("%+v", o)
			}
		}},
		{"default delay", base("subscribe", "t", "minOffsetsPerTrigger", "5"), "", func(t *testing.T, o kafka.SourceOptions) {
			if o.MaxTriggerDelay != 15*time.Minute {
				t.Fatalf("%+v", o)
			}
		}},
		{"bad min offsets", base("subscribe", "t", "minOffsetsPerTrigger", "-1"), "option minOffsetsPerTrigger", nil},
		{"bad delay", base("subscribe", "t", "minOffsetsPerTrigger", "5", "maxTriggerDelay", "soon"), "option maxTriggerDelay", nil},
		{"zero delay", base("subscribe", "t", "minOffsetsPerTrigger", "5", "maxTriggerDelay", "0"), "option maxTriggerDelay", nil},
		{"min above max", base("subscribe", "t", "minOffsetsPerTrigger", "50", "maxOffsetsPerTrigger", "10"), "minOffsetsPerTrigger=50 is higher than maxOffsetsPerTrigger=10", nil},
		{"bad failOnDataLoss", base("subscribe", "t", "failOnDataLoss", "maybe"), "option failOnDataLoss", nil},
		{"bad includeHeaders", base("subscribe", "t", "includeHeaders", "2x"), "option includeHeaders", nil},
		{"bad poll timeout", base("subscribe", "t", "kafkaConsumer.pollTimeoutMs", "-5"), "option kafkaConsumer.pollTimeoutMs", nil},
		{"bad minPartitions", base("subscribe", "t", "minPartitions", "none"), "option minPartitions", nil},
		{"fetch bytes", base("subscribe", "t", "kafka.fetch.max.bytes", "1048576", "kafka.max.partition.fetch.bytes", " 65536 "), "", func(t *testing.T, o kafka.SourceOptions) {
			if o.FetchMaxBytes != 1<<20 || o.FetchMaxPartitionBytes != 64<<10 {
				t.Fatalf("%+v", o)
			}
		}},
		{"fetch bytes zero", base("subscribe", "t", "kafka.fetch.max.bytes", "0"), "option kafka.fetch.max.bytes=\"0\"", nil},
		{"fetch bytes over 1 GiB", base("subscribe", "t", "kafka.max.partition.fetch.bytes", "2147483648"), "option kafka.max.partition.fetch.bytes", nil},
		{"fetch bytes not a number", base("subscribe", "t", "kafka.fetch.max.bytes", "1MB"), "must be a number of bytes", nil},
		{"group id", base("subscribe", "t", "kafka.group.id", "g"), "kafka.group.id is not supported", nil},
		{"auto offset reset", base("subscribe", "t", "kafka.auto.offset.reset", "earliest"), "kafka.auto.offset.reset is not supported", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := kafka.ParseSourceOptions(c.opts)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, o)
		})
	}
}

func TestParseSinkOptions(t *testing.T) {
	cases := []struct {
		name string
		opts map[string]string
		err  string
	}{
		{"ok", map[string]string{"kafka.bootstrap.servers": "h:1", "topic": "t", "checkpointLocation": "/x"}, ""},
		{"no servers", map[string]string{"topic": "t"}, "kafka.bootstrap.servers must be specified"},
		{"empty topic", map[string]string{"kafka.bootstrap.servers": "h:1", "topic": " "}, "option topic is empty"},
		{"serializer", map[string]string{"kafka.bootstrap.servers": "h:1", "kafka.value.serializer": "x"}, "kafka.value.serializer is not supported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := kafka.ParseSinkOptions(c.opts)
			if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("error %v, want %q", err, c.err)
			}
		})
	}
}

func TestPartitionOffsetsEncode(t *testing.T) {
	po, err := kafka.ParsePartitionOffsets(`{"b":{"10":3,"2":-1},"a":{"0":23}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(po.Encode()), `{"a":{"0":23},"b":{"2":-1,"10":3}}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	for _, bad := range []string{``, `[]`, `{"a":[1]}`, `{"a":{"-1":1}}`, `{"a":{"0":"x"}}`, `null`} {
		if _, err := kafka.ParsePartitionOffsets(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// FuzzParsePartitionOffsets: offsets come from checkpoints and options;
// no input may panic, and whatever parses re-encodes to a fixed point.
func FuzzParsePartitionOffsets(f *testing.F) {
	for _, s := range []string{`{"t":{"0":1}}`, `{"a":{"0":23,"1":-1},"b":{"0":-2}}`, `{}`, `{"t":{}}`, `{"t":{"99999999999":1}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		po, err := kafka.ParsePartitionOffsets(s)
		if err != nil {
			return
		}
		enc := po.Encode()
		again, err := kafka.ParsePartitionOffsets(string(enc))
		if err != nil {
			t.Fatalf("re-parse of %s: %v", enc, err)
		}
		if string(again.Encode()) != string(enc) {
			t.Fatalf("not a fixed point: %s vs %s", again.Encode(), enc)
		}
	})
}
