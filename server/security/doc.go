// Package security holds the attack suite of the arrowstream server: its
// tests build the arrowstream command, start `arrowstream serve` on
// 127.0.0.1 with authentication on, and attack it as a careless or hostile
// SQL user would (file system access, checkpoint escapes, network
// endpoints, HTTP without a login, quotas, stalled readers, oversized
// statements) with the real Flight SQL client, the ADBC Go driver and
// net/http. Each test asserts the refusal, its error text, and that the
// server still answers afterwards.
//
// The package has no non-test code.
package security
