package vector

import (
	"strings"
	"unicode"
)

// SpecialDatetimeValue reads Spark's special date and timestamp strings
// (DateTimeUtils.extractSpecialValue): "epoch", "now", "today",
// "yesterday" or "tomorrow", in any case, with blanks around, optionally
// followed by a time zone that must resolve but is otherwise ignored
// ("now" takes none). value is the word in lower case; ok is false for any
// other text, including a known word with a zone that does not resolve.
func SpecialDatetimeValue(text string) (value string, ok bool) {
	s := strings.TrimFunc(text, func(r rune) bool { return r <= ' ' })
	if len(s) < 3 {
		return "", false
	}
	i := 0
	for i < len(s) && s[i] < 0x80 && unicode.IsLetter(rune(s[i])) {
		i++
	}
	if i == 0 {
		return "", false
	}
	word := strings.ToLower(s[:i])
	switch word {
	case "epoch", "now", "today", "yesterday", "tomorrow":
	default:
		return "", false
	}
	// Spark's pattern: the letters, blanks (spaces or tabs), then the zone.
	zone := strings.TrimLeft(s[i:], " \t")
	if zone == "" {
		return word, true
	}
	if word == "now" {
		return "", false // "now" takes no zone
	}
	if _, _, ok := parseZone([]byte(zone)); !ok {
		return "", false
	}
	return word, true
}
