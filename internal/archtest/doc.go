// Package archtest holds tests of the repository's shape: every package has
// a doc comment, only crawler imports colly, and the leaf packages import no
// sibling. It has no code of its own.
package archtest
