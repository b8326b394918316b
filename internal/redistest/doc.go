// Package redistest starts a real redis-server for tests: a private process
// on a free loopback port, with its data (an append-only file with
// appendfsync everysec, as the README recommends for a crawl) in a
// temporary directory that the test removes.
// StartCluster does the same for a Redis Cluster of three masters, made
// with redis-cli --cluster create.
//
// No mock: the distributed tests exercise the server users run. When no
// redis-server binary is on PATH, Start skips the test and says how to
// install one, except under CI (CI set in the environment), where a missing
// server fails the test: .ci/run installs Debian's redis-server.
package redistest
