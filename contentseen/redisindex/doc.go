// Package redisindex is a contentseen.Shared kept in Redis (7.0 or later):
// the ContentSeen index of a distributed crawl, shared by any number of
// worker processes, with check-and-insert atomic across them.
package redisindex
