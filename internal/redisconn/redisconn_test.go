package redisconn

import (
	"errors"
	"testing"
)

func TestCheckVersion(t *testing.T) {
	errOld := errors.New("old")
	for _, c := range []struct {
		info string
		ok   bool
	}{
		{"# Server\r\nredis_version:7.0.15\r\n", true},
		{"# Server\r\nredis_version:8.2.1\r\n", true},
		{"# Server\r\nredis_version:6.2.14\r\n", false},
		{"# Server\r\nredis_version:x\r\n", false},
		{"# Server\r\n", false},
	} {
		err := checkVersion(c.info, errOld)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, errOld) {
			t.Errorf("checkVersion(%q) = %v, want ok=%v (else wrapping the given error)", c.info, err, c.ok)
		}
	}
}
