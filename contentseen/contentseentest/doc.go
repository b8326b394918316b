// Package contentseentest holds the contract test suite of
// contentseen.Shared: every implementation (contentseen.SharedMem,
// contentseen/redisindex) runs RunShared, which checks the documented
// contract, compares Lookup with a brute-force scan of what was claimed (the
// oracle), and races clients claiming near-identical fingerprints.
package contentseentest
