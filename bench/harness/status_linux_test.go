package harness

import "testing"

// BenchmarkStatusSample: one sample of the resident set's parts, as the
// meter took it before session 38 (os.ReadFile of the status file once
// per field) and through the kept descriptor. CPU per sample, which the
// meter bills to the engine's run after each epoch.
func BenchmarkStatusSample(b *testing.B) {
	if anon, _ := rssParts(); anon == 0 {
		b.Skip("no /proc/self/status on this platform")
	}
	b.Run("readfile-per-field", func(b *testing.B) {
		for b.Loop() {
			statusBytes("RssAnon:")
			statusBytes("RssFile:")
		}
	})
	b.Run("kept", func(b *testing.B) {
		s := statusReader{open: openStatus}
		defer s.close()
		for b.Loop() {
			s.rssParts()
		}
	})
}
