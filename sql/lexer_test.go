package sql

import (
	"fmt"
	"strings"
	"testing"
)

// tokString renders tokens as kind:text@line:col for comparison.
func tokString(toks []token) string {
	var parts []string
	for _, t := range toks {
		switch t.kind {
		case tEOF:
			parts = append(parts, fmt.Sprintf("EOF@%s", t.pos))
		case tErr:
			parts = append(parts, "ERR:"+t.err.Error())
		case tWord:
			if t.kw != "" {
				parts = append(parts, fmt.Sprintf("KW:%s@%s", t.kw, t.pos))
			} else {
				parts = append(parts, fmt.Sprintf("ID:%s@%s", t.text, t.pos))
			}
		case tQuoted:
			parts = append(parts, fmt.Sprintf("QID:%s@%s", t.text, t.pos))
		case tString:
			parts = append(parts, fmt.Sprintf("STR:%q@%s", t.text, t.pos))
		case tNumber:
			parts = append(parts, fmt.Sprintf("NUM:%s@%s", t.text, t.pos))
		case tBinary:
			parts = append(parts, fmt.Sprintf("BIN:%s@%s", t.text, t.pos))
		default:
			parts = append(parts, fmt.Sprintf("%s@%s", t.raw, t.pos))
		}
	}
	return strings.Join(parts, " ")
}

func TestLexer(t *testing.T) {
	tests := []struct{ in, want string }{
		{"select From x", "KW:SELECT@1:1 KW:FROM@1:8 ID:x@1:13 EOF@1:14"},
		{"a.b t.* f(1)", "ID:a@1:1 .@1:2 ID:b@1:3 ID:t@1:5 .@1:6 *@1:7 ID:f@1:9 (@1:10 NUM:1@1:11 )@1:12 EOF@1:13"},
		{"a<=>b<=c<>d!=e==f>=g||h::i", "ID:a@1:1 <=>@1:2 ID:b@1:5 <=@1:6 ID:c@1:8 <>@1:9 ID:d@1:11 !=@1:12 ID:e@1:14 ==@1:15 ID:f@1:17 >=@1:18 ID:g@1:20 ||@1:21 ID:h@1:23 ::@1:24 ID:i@1:26 EOF@1:27"},
		{"1 1.5 .5 1. 1e3 1.5E-3 10L 5bd 2f 1e", "NUM:1@1:1 NUM:1.5@1:3 NUM:.5@1:7 NUM:1.@1:10 NUM:1e3@1:13 NUM:1.5E-3@1:17 NUM:10L@1:24 NUM:5bd@1:28 NUM:2f@1:32 ID:1e@1:35 EOF@1:37"},
		{"t.5", "ID:t@1:1 .@1:2 NUM:5@1:3 EOF@1:4"},
		{"'a''b' \"c\"", `STR:"a"@1:1 STR:"b"@1:4 STR:"c"@1:8 EOF@1:11`},
		{`'\n\t\\\'\"\u00e9\101\0x\%'`, `STR:"\n\t\\'\"éA\x00x\\%"@1:1 EOF@1:28`},
		{"`a``b` `select`", "QID:a`b@1:1 QID:select@1:8 EOF@1:16"},
		{"X'0aFF' x'' xy", "BIN:0aFF@1:1 BIN:@1:9 ID:xy@1:13 EOF@1:15"},
		{"a -- comment\nb /* c /* nested */ d */ e", "ID:a@1:1 ID:b@2:1 ID:e@2:26 EOF@2:27"},
		{"é ü\n  ñ", "ID:é@1:1 ID:ü@1:3 ID:ñ@2:3 EOF@2:4"},
		{"'é' x", `STR:"é"@1:1 ID:x@1:5 EOF@1:6`},
		{"a\r\nb", "ID:a@1:1 ID:b@2:1 EOF@2:2"},
		{"a $ b", "ID:a@1:1 ERR:syntax error at 1:3: unexpected character '$' EOF@1:3"},
		{"'abc", "ERR:syntax error at 1:1: unterminated string literal: no closing ' before end of input EOF@1:1"},
	}
	for _, tc := range tests {
		if got := tokString(lex(tc.in)); got != tc.want {
			t.Errorf("lex(%q)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

func TestLookupKeyword(t *testing.T) {
	for in, want := range map[string]string{
		"select": "SELECT", "SeLeCt": "SELECT", "watermark": "WATERMARK",
		"selects": "", "": "", "é": "", strings.Repeat("a", 100): "",
	} {
		if got := lookupKeyword(in); got != want {
			t.Errorf("lookupKeyword(%q) = %q, want %q", in, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { lookupKeyword("Select") }); n != 0 {
		t.Errorf("lookupKeyword allocates %v times", n)
	}
}
