// Package warc reads and writes WARC files (ISO 28500, WARC/1.1 and 1.0),
// plain or gzip-compressed one record per gzip member (.warc.gz), as web
// archives and crawlers exchange them.
//
// # Idea
//
// A WARC file is a sequence of records. Each record is a version line
// ("WARC/1.1"), named header fields ("WARC-Type: response"), an empty line,
// a block of exactly Content-Length bytes, and two CRLFs. A response
// record's block is the HTTP response as received (status line, headers,
// body); a metadata record's block is more named fields
// (application/warc-fields). In a .warc.gz every record is its own gzip
// member, so a reader can seek to a record's offset and decompress only it;
// concatenated members are one valid gzip stream for ordinary tools.
//
// Writer writes one record per call; Reader streams records one at a time,
// the block as an io.Reader limited to Content-Length, so memory stays
// bounded by the largest header (MaxHeaderBytes), never by a record or a
// file. ResponseBlock and ReadResponse convert between an HTTP response and
// a response record's block.
//
// # Cost
//
// Writing costs one SHA-1 of the block (WARC-Block-Digest) and, compressed,
// one gzip member per record (the gzip.Writer is reused: reset before each
// record). Reading costs the decompression and a copy of the header; the
// block is not read unless the caller reads it.
//
// # Caveats
//
//   - Offsets of records in a .warc.gz are the offsets of their gzip
//     members; when a file was gzipped whole (one member), every record
//     reports the member's offset 0. In a plain file offsets are exact.
//   - ReadResponse decodes chunked transfer encoding (net/http does) but not
//     Content-Encoding; callers that want the decoded payload handle gzip.
//   - The reader accepts LF-only line ends and a missing record trailer, as
//     some writers produce them; the writer always writes CRLF.
//   - The package does not validate digests on read.
package warc
