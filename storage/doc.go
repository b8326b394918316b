// Package storage keeps the pages a crawl stores and the duplicates it
// drops, in a bbolt DB the caller owns, and writes the drop log and the
// JSON Lines export.
//
// # Idea
//
// The crawler completes each page in one bbolt write transaction: it asks
// the ContentSeen index, then either stores the page (PutTx) and queues its
// links, or records a drop (PutDropTx); index, store and frontier commit
// together or not at all. So everything here has a Tx method taking the
// caller's *bolt.Tx, and a convenience method with its own transaction.
//
// # Format (version 1)
//
// Everything lives in one top-level bucket (Options.Bucket, "pages") so it
// can share the file with the index and the frontier:
//
//	format            1 byte: the format version (1); New refuses others (ErrFormat)
//	npages            8 bytes big-endian: number of stored pages
//	meta/    ID   ->  1 byte version + JSON metadata (url, final_url, status, content_type,
//	                  fetched_at, depth, title, lang, fp, thin, digest (32 hex), truncated,
//	                  text_len, body_len)
//	text/    ID   ->  zstd frame of the extracted text (absent: empty)
//	body/    ID   ->  zstd frame of the raw body (absent: empty)
//	header/  ID   ->  zstd frame of the JSON of the response header (absent: none)
//	url/     requested URL -> ID
//	final/   final URL     -> ID   (first page wins)
//	digest/  16-byte digest -> ID  (first page wins; thin pages and the zero digest are not indexed)
//	drops/   drop ID -> 1 byte version + JSON (url, final_url, title, depth, fetched_at,
//	                  dup_of, dup_of_url, distance, reason, fp, matched_fp, text_len,
//	                  sim, cont; dup_of_url only for a page stored in another
//	                  data directory, see Drop.DuplicateOfURL)
//	droptext/ drop ID -> zstd frame of the dropped page's text (Options.KeepDropText)
//	dropurl/ requested and final URL -> drop ID (latest drop wins)
//	dropby/  stored page ID ‖ drop ID -> empty (DropsOf: the drops of one page)
//
// IDs are 8-byte big-endian keys, so byte order is numeric order. Page and
// drop IDs come from the bucket sequences: a new ID is the largest so far
// plus one, never reused (the sequence lives in the file; a rolled-back
// transaction rolls it back too, but its ID was never visible).
//
// The drop log (DropLog, DropRecord) and the export (ExportJSONL,
// ExportRecord) are JSON Lines whose field names and order are documented on
// those types; fingerprints are 16 lower-case hex digits, times RFC 3339
// in UTC with milliseconds (TimeFormat).
//
// # Cost
//
// Appends stay cheap as the store grows: new IDs land at the right edge of
// the meta, text, body, header and drops B-trees (filled to 90 % instead of bbolt's
// 50 %), and only the URL and digest indexes take random inserts, each a
// B-tree descent of a few pages. Metadata, text and body live in separate
// buckets, so listings (PageHeaders, DropHeaders, Counts) read no text or
// body, and the export reads no body. Counts is O(1).
//
// PutTx of a 50 KB page and its commit cost about 0.45 ms of CPU, 0.3 ms of
// it zstd (SpeedFastest, about 3.5x on real pages), and about a third more
// in a store of 100,000 pages: the B-trees are deeper, so a commit copies
// more pages. That grows with log(pages), not pages; see BenchmarkPutTx.
// With fsync on, one commit per page is bounded by the disk instead
// (about 5 ms a commit on the shared test machine). A drop costs
// a record of about 300 bytes plus its compressed text. Scans read 256
// records (or about 4 MB) per read transaction, so memory stays bounded and
// no transaction is held while the callback runs.
//
// # Caveats
//
//   - The Store does not own the DB: open it with bolt.Options.Timeout (so a
//     second crawl fails fast instead of hanging) and close it yourself. For
//     large crawls, bolt.Options{NoFreelistSync: true, FreelistType:
//     bolt.FreelistMapType} keeps commits from rewriting a growing freelist.
//   - Pages returned by this package own their memory (copied out of bolt's
//     mmap) and stay valid after the transaction.
//   - PutTx of a new page whose requested URL is already stored fails with
//     ErrExists; pass the stored ID to replace a page.
//   - Scans are not snapshots: records committed during a scan may appear.
//   - DropLog.Write fsyncs every line (the crawler writes it before marking
//     the page done), so its rate is the disk's fsync rate, shared by all
//     writers. A crash between the log write and the commit makes the page
//     be fetched and dropped again, so a URL may appear twice in the log:
//     readers should keep the last line per url. A crash mid-write leaves a
//     torn last line: OpenDropLog cuts it off, ReadDropLog reports it as an
//     error wrapping ErrTornLine after every complete record.
//   - A bbolt file never shrinks; dropping text (KeepDropText false) only
//     affects drops recorded afterwards.
//   - On a read-only DB, New creates nothing: a missing bucket reads as an
//     empty store.
package storage
