package socket

import "strconv"

// DataAvailable implements arrowstream.NotifyingSource: the channel is
// closed when the reader buffers a line after the call (or the connection
// ends, so that its error is reported at once), which lets a continuous
// query process a line as soon as it arrives instead of polling.
func (s *Source) DataAvailable() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.notify == nil {
		s.notify = make(chan struct{})
	}
	return s.notify
}

// wake closes the channel handed out by DataAvailable, if any; callers
// hold s.mu.
func (s *Source) wake() {
	if s.notify != nil {
		close(s.notify)
		s.notify = nil
	}
}

// Metrics implements arrowstream.MetricsSource: numLinesRead is every line
// received on this connection, numLinesBuffered those kept for the epochs
// not yet committed (the reader stops reading, and so throttles the
// writer, when maxBufferedLines are buffered; no line is dropped).
func (s *Source) Metrics() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]string{
		"numLinesRead":     strconv.FormatInt(s.dropped+int64(len(s.lines)), 10),
		"numLinesBuffered": strconv.Itoa(len(s.lines)),
	}
}
