// Package access is the resource policy of a session: which directories
// SQL may read and write (file sources and sinks, cleanSource archives,
// checkpoints) and which network endpoints sources and sinks may connect
// to (socket, Kafka).
//
// A nil *Policy allows everything: the embedded Go library keeps full
// access unless the application sets a policy. The arrowstream server
// (serve, and run with a listening port) always sets one, built from
// --data-dir, --checkpoint and --allow-connect.
//
// Checks resolve paths the way the operating system will use them: made
// absolute, cleaned, and with symbolic links of the longest existing
// prefix evaluated, so that neither ".." nor a symbolic link leads out of a
// root. A glob is confined by its fixed prefix and by every file it
// matches when checked. Every refusal names the refused path or endpoint
// and the flag that would allow it.
package access
